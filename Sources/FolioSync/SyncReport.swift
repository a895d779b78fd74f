import FolioCore

/// What one sync did, from one side's point of view.
///
/// For a shared folder, a "message" is a batch file: written ones count as sent, read ones as received.
public struct SyncReport: Hashable, Sendable, CustomStringConvertible {
    /// Messages (or batch files) sent.
    public var messagesSent = 0
    /// Messages (or batch files) received and decoded.
    public var messagesReceived = 0
    /// Messages (or batch files) that could not be decoded: treated as lost (a live session retries; a folder
    /// reads the file again next time) and described in ``problems``.
    public var messagesRejected = 0
    /// Changes sent to the peer (or written to the folder).
    public var changesSent = 0
    /// Changes received from the peer (or read from the folder), duplicates included.
    public var changesReceived = 0
    /// Messages sent that carried changes as runs (message format 3), among ``messagesSent``.
    public var runsSent = 0
    /// Runs received and decoded, among ``messagesReceived``.
    public var runsReceived = 0
    /// Received changes that entered the log (including earlier waiting changes they made ready).
    public var changesApplied = 0
    /// Received changes that were already in the log or already waiting.
    public var duplicates = 0
    /// Blobs asked of the peer (``SyncMessage/wantBlobs(_:)``).
    public var blobsAsked = 0
    /// Blobs sent to the peer that asked for them.
    public var blobsSent = 0
    /// Blobs received and stored.
    public var blobsReceived = 0
    /// The documents whose logs grew, in identity order.
    public var updatedDocuments: [DocumentID] = []
    /// Whether the exchange ran to its end: this side holds everything the other announced (and, for a live
    /// session, the other side said the same). `false` when the retries ran out or a folder had unreadable files;
    /// whatever was received is kept either way.
    public var isComplete = false
    /// The documents the peer announced holding (in identity order), filled in once the exchange is complete: this
    /// side then holds everything the peer holds of them. A folder names those whose every file it read, this
    /// device's own included. Empty while incomplete.
    public var caughtUpDocuments: [DocumentID] = []
    /// What went wrong without stopping the sync (unreadable messages or files), one sentence each, in the order met.
    public var problems: [String] = []

    /// An empty report.
    public init() {}

    /// Notes that `document`'s log grew, keeping ``updatedDocuments`` sorted and free of repeats.
    mutating func noteUpdated(_ document: DocumentID) {
        var low = 0
        var high = updatedDocuments.count
        while low < high {
            let middle = (low + high) / 2
            if updatedDocuments[middle] < document { low = middle + 1 } else { high = middle }
        }
        if low == updatedDocuments.count || updatedDocuments[low] != document {
            updatedDocuments.insert(document, at: low)
        }
    }

    /// One line: the counts.
    public var description: String {
        "\(isComplete ? "complete" : "incomplete"): sent \(changesSent) changes in \(messagesSent) messages, received \(changesReceived) in \(messagesReceived) (\(changesApplied) applied, \(duplicates) duplicates, \(messagesRejected) rejected), \(updatedDocuments.count) documents updated"
    }
}
