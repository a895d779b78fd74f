import FolioCore
import FolioSync

/// A change log as a plain value, for driving ``SyncSession`` without SQLite: cheap to copy, so a search over
/// delivery orders can branch at every step.
///
/// It applies a change only after everything in its vector (an early one waits), ignores duplicates, and answers
/// `changes(since:)` in causal order, like the store.
package struct ModelStore: Hashable {
    private(set) var applied: [DocumentID: [ChangeID: EncodedChange]] = [:]
    private(set) var waiting: [DocumentID: [ChangeID: EncodedChange]] = [:]

    package init(_ changes: [Change] = []) {
        ingest(changes.map(EncodedChange.init))
    }

    package var documents: [DocumentID] { Array(Set(applied.keys).union(waiting.keys)).sorted() }

    package func vector(of document: DocumentID) -> VersionVector {
        var vector = VersionVector()
        for id in (applied[document] ?? [:]).keys { vector.include(id) }
        return vector
    }

    package var vectors: [DocumentID: VersionVector] {
        Dictionary(uniqueKeysWithValues: documents.map { ($0, vector(of: $0)) })
    }

    /// The hashes of the changes no other change of the document was made on, sorted.
    package var heads: [DocumentID: [ChangeHash]] {
        Dictionary(
            uniqueKeysWithValues: documents.map { document in
                let changes = (applied[document] ?? [:]).values.map(\.change)
                let parents = Set(changes.flatMap(\.parents))
                return (document, changes.map(\.hash).filter { !parents.contains($0) }.sorted())
            })
    }

    package func changes(of document: DocumentID, since: VersionVector) -> [EncodedChange] {
        (applied[document] ?? [:]).values.filter { !since.contains($0.change.id) }
            .sorted { ($0.change.lamport, $0.change.id) < ($1.change.lamport, $1.change.id) }
    }

    /// Hashes of every applied change of `document`, in causal order.
    package func log(of document: DocumentID) -> [ChangeHash] {
        changes(of: document, since: VersionVector()).map(\.change.hash)
    }

    package mutating func ingest(_ changes: [EncodedChange]) {
        for change in changes {
            let document = change.change.document
            if applied[document]?[change.change.id] != nil { continue }
            waiting[document, default: [:]][change.change.id] = change
        }
        for document in Array(waiting.keys).sorted() {
            var progressed = true
            while progressed {
                progressed = false
                var vector = self.vector(of: document)
                for id in (waiting[document] ?? [:]).keys.sorted() {
                    let change = waiting[document]![id]!.change
                    let ready = change.vector.entries.allSatisfy { entry in
                        entry.device == id.device
                            ? entry.seq == vector[id.device] + 1 : entry.seq <= vector[entry.device]
                    }
                    guard ready else { continue }
                    applied[document, default: [:]][id] = waiting[document]![id]
                    waiting[document]![id] = nil
                    vector.include(id)
                    progressed = true
                }
            }
            if waiting[document]?.isEmpty == true { waiting[document] = nil }
        }
    }

    package var pendingCount: Int { waiting.values.reduce(0) { $0 + $1.count } }
}
