/// Everything the report says of one document: its conflicts, what they discarded, how each device holds it, and
/// its causal graph.
public struct DocumentReport: Codable, Hashable, Sendable {
    /// The document's identity (canonical UUID text).
    public var id: String
    /// Its display name (as most devices name it; each device's own is in ``devices``).
    public var name: String
    /// Its type identifier, such as `com.folio.text`.
    public var type: String
    /// Every conflict, open or resolved, oldest first.
    public var conflicts: [ConflictEntry] = []
    /// Every resolution and the versions it discarded, oldest first: the loss ledger.
    public var losses: [LossEntry] = []
    /// The document's final state on each device, in the report's device order.
    public var devices: [DocumentOnDevice] = []
    /// Every change of the document, in topological order (lamport, then device name).
    public var graph: [GraphNode] = []
}

/// One device's vector entry: the highest change seen from a device.
public struct VectorEntry: Codable, Hashable, Sendable {
    /// The device's name.
    public var device: String
    /// The highest sequence number seen from it.
    public var seq: UInt64
}

/// How one device holds a document at the end.
public struct DocumentOnDevice: Codable, Hashable, Sendable {
    /// The device's name.
    public var device: String
    /// `false` when the device has deleted the document or never received it.
    public var exists: Bool
    /// The document's name on this device (empty when the device never received it).
    public var name: String
    /// The document's state flags (`inConflict`, `closed`, `savingError`, `editingDisabled`,
    /// `progressAvailable`), or `["normal"]`; `["absent"]` when the device never received it, `["unopened"]` when it
    /// was captured from the log without being opened (then ``contents`` is empty).
    public var state: [String]
    /// The device's vector for the document, by device name order of the report.
    public var vector: [VectorEntry] = []
    /// The heads (short hashes), in causal order.
    public var heads: [String] = []
    /// The contents the device shows, as lines: a text's lines; records as `r1: name=Ann, city=Oslo`; a package's
    /// text lines, then one `images/NAME: SIZE bytes, sha256 HEX` line per image.
    public var contents: [String] = []
    /// Who wrote the text the device shows, stretch by stretch in the text's order (what `Document.blame()` says);
    /// absent for a document without a text that merges character by character, one not opened, one of more than
    /// 100,000 changes (it costs a replay of the whole history), and when the merge of the heads is not the text
    /// shown.
    public var authorship: [AuthoredStretch]?

    /// Whether ``contents`` says what the device shows (it was opened and holds the document).
    public var showsContents: Bool { exists && !state.contains("unopened") }
}

/// A stretch of a document's text and the change that typed it.
public struct AuthoredStretch: Codable, Hashable, Sendable {
    /// Where the stretch starts in the text, in Unicode scalars.
    public var start: Int
    /// The stretch's text.
    public var text: String
    /// The change that typed it, as `DEVICE:seq` (an id of the causal graph); absent when no change names the state
    /// the stretch comes from.
    public var change: String?
    /// The device that typed it (the change's device).
    public var device: String?
}

/// One change of a document, as the causal graph shows it.
public struct GraphNode: Codable, Hashable, Sendable {
    /// `DEVICE:seq`, unique in the document.
    public var id: String
    /// The change's hash, shortened (12 hex digits).
    public var hash: String
    /// The device that made it.
    public var device: String
    /// Its place in that device's sequence, from 1.
    public var seq: UInt64
    /// Its Lamport timestamp.
    public var lamport: UInt64
    /// What it does: `create`, `rename`, `move`, `delete`, `restore`, `edit`, `undo`, `redo`, `baseline`, or
    /// `resolution(STRATEGY)`.
    public var kind: String
    /// The ids of the changes it was made on, in the order of their hashes.
    public var parents: [String]
    /// Its device's wall time: ISO 8601 in UTC with milliseconds.
    public var time: String

    /// Whether the change settled a conflict.
    public var isResolution: Bool { kind.hasPrefix("resolution") }
}
