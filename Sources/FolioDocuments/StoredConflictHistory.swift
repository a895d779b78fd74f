import FolioConflicts
import FolioCore
import FolioMerge
import FolioStore

/// A document's history as the conflict engine reads it (`ConflictHistory`): changes from the
/// library's log, states by replay from its checkpoints.
struct StoredConflictHistory<Model: DocumentModel>: ConflictHistory {
    let store: ChangeLogStore
    let document: DocumentID
    /// What the errors say is being read, such as "the log of NAME".
    let subject: String
    /// Where the document keeps decoded operation groups, if anywhere.
    var decoded: DecodedOperations? = nil
    /// States the document knows already (``DocumentReplay/known``).
    var known: [ChangeHash: (vector: VersionVector, model: Model)] = [:]
    /// The change graph of the heads last grouped, already replayed, for the merge of those heads.
    var replayedGraph: CharacterMergeGraph<Model>? = nil

    private var replay: DocumentReplay<Model> {
        DocumentReplay(store: store, document: document, decoded: decoded, known: known)
    }

    func change(_ hash: ChangeHash) throws(DocumentError) -> Change? {
        do { return try store.change(hash, of: document) } catch { throw .store(error, "reading \(subject)") }
    }

    func change(_ id: ChangeID) throws(DocumentError) -> Change? {
        do { return try store.change(id, of: document) } catch { throw .store(error, "reading \(subject)") }
    }

    /// - Throws: ``DocumentError`` `.store` when the log cannot be read, `.invalidContents` when a checkpoint
    ///   cannot be loaded.
    func state(at change: Change) throws(DocumentError) -> Model {
        try replay.state(at: change).model
    }

    /// The merge of `heads` replayed from the change graph, for a model that merges character by character, with a
    /// conflict wherever two versions overlap.
    ///
    /// - Throws: ``DocumentError`` `.store` when the log cannot be read, `.invalidContents` when a checkpoint
    ///   cannot be loaded.
    func characterMerge(of heads: [Change]) throws(DocumentError) -> MergeResult<Model>? {
        guard Model.self is any CharacterMergeable.Type else { return nil }
        if let replayedGraph, replayedGraph.heads == Set(heads.map(\.hash)) {
            return try replayedGraph.merge(of: heads)
        }
        return try replay.characterMerge(of: heads)
    }
}
