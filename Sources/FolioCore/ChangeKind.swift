import Foundation

/// What a change does to its document.
public enum ChangeKind: Hashable, Sendable {
    /// Model operations, encoded by the document's model (opaque to the log), made as a plain edit, an undo or a redo.
    case edit(Edit)
    /// A lifecycle event: create, rename, move, delete, restore.
    case lifecycle(LifecycleEvent)
    /// A whole snapshot of the contents, encoded by the model: the first change of an imported file, or a change
    /// made on disk by another program.
    case baseline(contents: Data)
    /// The settling of competing versions; its parents are all the competing heads.
    case resolution(Resolution)
}

extension ChangeKind {
    /// A small number naming the kind (0 edit, 1 lifecycle, 2 baseline, 3 resolution), the same as its tag in the
    /// change encoding; stores use it to find changes of one kind.
    public var tag: UInt8 {
        switch self {
        case .edit: 0
        case .lifecycle: 1
        case .baseline: 2
        case .resolution: 3
        }
    }
}

/// A group of model operations.
public struct Edit: Hashable, Sendable {
    /// Why the operations were made.
    public enum Intent: Hashable, Sendable {
        /// A plain edit.
        case edit
        /// Undoes the change named: the operations are its inverse.
        case undo(of: ChangeID)
        /// Redoes the change named (after it was undone).
        case redo(of: ChangeID)
    }

    /// The operations, in the model's own encoding.
    public var operations: Data
    /// Why they were made.
    public var intent: Intent

    /// Creates an edit.
    public init(operations: Data, intent: Intent = .edit) {
        self.operations = operations
        self.intent = intent
    }
}

/// Where a document lives: on this device only, or in the synced container (what iCloud calls ubiquitous).
public enum DocumentContainer: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// `Documents/`: on this device.
    case local = 0
    /// `Shared/`: synced between devices.
    case shared = 1

    /// `local` or `shared`.
    public var description: String {
        switch self {
        case .local: "local"
        case .shared: "shared"
        }
    }
}

/// A change to a document's existence, name or place.
public enum LifecycleEvent: Hashable, Sendable {
    /// The document came into being with this name, type identifier and container.
    case create(name: String, type: String, container: DocumentContainer)
    /// The document's display name changed.
    case rename(to: String)
    /// The document moved between containers.
    case move(to: DocumentContainer)
    /// The document was deleted (it can be restored: history is kept).
    case delete
    /// A deleted document was brought back.
    case restore
}

/// How competing versions were settled.
public struct Resolution: Hashable, Sendable {
    /// The rule that settled them.
    public enum Strategy: Hashable, Sendable {
        /// A person chose.
        case userChoice
        /// The latest by wall time, then lamport, then device.
        case latestWins
        /// A three-way merge from the common ancestor.
        case merge
        /// The losers became new documents.
        case keepBoth
        /// An app-defined rule, by name.
        case custom(String)
    }

    /// The rule that settled the versions.
    public let strategy: Strategy
    /// The heads whose versions were kept (one for a choice, several for a merge), in ascending order.
    public let chosen: [ChangeHash]
    /// The heads whose versions were discarded, in ascending order: the loss ledger's entries.
    public let discarded: [ChangeHash]
    /// New contents in the model's encoding, when the result is none of the versions as they were (a merge or
    /// contents a person supplied); `nil` when the result is exactly the chosen version.
    public let contents: Data?

    /// Creates a resolution record; the hash lists are kept sorted and without repeats, as the encoding needs.
    public init(strategy: Strategy, chosen: [ChangeHash], discarded: [ChangeHash], contents: Data? = nil) {
        self.strategy = strategy
        self.chosen = Array(Set(chosen)).sorted()
        self.discarded = Array(Set(discarded)).sorted()
        self.contents = contents
    }
}
