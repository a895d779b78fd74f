import FolioConflicts
import FolioCore

/// A document's log held as values, with no store: changes arrive in any order and wait until their parents are
/// there, as a store's ingestion does. The engine reads it as its ``ConflictHistory``.
package struct MemoryLog<Model: DocumentModel>: ConflictHistory {
    package typealias Failure = Never

    package let document: DocumentID
    private var byHash: [ChangeHash: Change] = [:]
    private var byID: [ChangeID: ChangeHash] = [:]
    private var referenced: Set<ChangeHash> = []
    private var waiting: [Change] = []

    package init(document: DocumentID) {
        self.document = document
    }

    /// Adds `change` once its parents are here, and then whatever waited for it.
    package mutating func receive(_ change: Change) {
        guard byHash[change.hash] == nil, !waiting.contains(change) else { return }
        waiting.append(change)
        var progressed = true
        while progressed {
            progressed = false
            for (index, candidate) in waiting.enumerated() where candidate.parents.allSatisfy({ byHash[$0] != nil }) {
                byHash[candidate.hash] = candidate
                byID[candidate.id] = candidate.hash
                referenced.formUnion(candidate.parents)
                waiting.remove(at: index)
                progressed = true
                break
            }
        }
    }

    /// Every change held, in causal order (lamport, then device).
    package var changes: [Change] {
        byHash.values.sorted { ($0.lamport, $0.id.device) < ($1.lamport, $1.id.device) }
    }

    /// The changes no other change was made on, in causal order.
    package var heads: [Change] { changes.filter { !referenced.contains($0.hash) } }

    /// The resolution changes, in causal order.
    package var resolutions: [Change] {
        changes.filter { if case .resolution = $0.kind { true } else { false } }
    }

    package func change(_ hash: ChangeHash) -> Change? { byHash[hash] }

    package func change(_ id: ChangeID) -> Change? { byID[id].flatMap { byHash[$0] } }

    /// The replay along primary parents: a baseline or a resolution with contents sets the state, an edit applies
    /// its operations (those that do not apply are skipped), anything else keeps its primary parent's state.
    package func state(at change: Change) -> Model {
        switch change.kind {
        case .baseline(let contents):
            if let model = try? Model(contents: DocumentContents(decoding: contents)) { return model }
        case .resolution(let resolution):
            if let contents = resolution.contents,
                let model = try? Model(contents: DocumentContents(decoding: contents))
            {
                return model
            }
        case .edit, .lifecycle:
            break
        }
        var model: Model
        switch primaryParentRule.primaryParent(of: change) {
        case .parent(let parent): model = state(at: parent)
        case .root, .missing: model = Model()
        }
        if case .edit(let edit) = change.kind, let operations = try? Model.Operation.decodeGroup(edit.operations) {
            for operation in operations { _ = try? model.apply(operation) }
        }
        return model
    }
}
