import FolioCore

/// One version of a document: the state at one of its heads (what NSFileVersion describes on Apple platforms).
///
/// Heads whose states are equal form one version, so two devices that settled a conflict the same way show one
/// version, not two. Every device computes the same versions and the same current one for the same heads.
public struct DocumentVersion<Model: DocumentModel>: Sendable, Identifiable, CustomStringConvertible {
    /// The version's head: the change it ends with (the latest of its heads, if several share the state).
    public let head: Change
    /// Every head with this state, in causal order.
    public let heads: [ChangeHash]
    /// The device that made the head (what NSFileVersion calls the saving computer).
    public let savingDevice: Device
    /// What the version contains.
    public let contents: Model
    /// The state the competing versions grew from (the state at their common ancestor); the version's own state
    /// when nothing competes.
    public let ancestor: Model
    /// Whether it is the version the document shows: the same on every device (highest lamport, then device).
    public let isCurrent: Bool
    /// Whether it competes with the current version (a conflict not yet resolved).
    public let isConflict: Bool

    /// Creates a version.
    public init(
        head: Change, heads: [ChangeHash], savingDevice: Device, contents: Model, ancestor: Model, isCurrent: Bool,
        isConflict: Bool
    ) {
        self.head = head
        self.heads = heads
        self.savingDevice = savingDevice
        self.contents = contents
        self.ancestor = ancestor
        self.isCurrent = isCurrent
        self.isConflict = isConflict
    }

    /// A persistent identifier: the head's hash, the same on every device and across runs.
    public var id: ChangeHash { head.hash }
    /// When the head was made, by its device's clock.
    public var modificationDate: Timestamp { head.wallTime }
    /// The version's causal context.
    public var vector: VersionVector { head.vector }
    /// Whether nothing about it awaits a decision (it is not in conflict).
    public var isResolved: Bool { !isConflict }
    /// How the version differs from ``ancestor``: lines for a text, fields for records, members for a package.
    public var changes: [ContentChange] { contents.changes(from: ancestor) }

    /// `device at time (head)`, for messages; the device named with its person when known (`Anna on iPad`).
    public var description: String {
        "\(savingDevice.label.isEmpty ? savingDevice.id.description : savingDevice.label) at \(modificationDate) (\(head.hash.shortHex))"
            + (isCurrent ? ", current" : "") + (isConflict ? ", in conflict" : "")
    }
}
