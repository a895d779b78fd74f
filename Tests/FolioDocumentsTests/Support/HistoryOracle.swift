import FolioCore
import FolioDocuments
import FolioModels
import Foundation

/// What a text document's versions must be, computed from its changes alone, by the test's own means.
///
/// Happens-before is the transitive closure of the parent links (not the vectors, nor the store's frontier); the
/// heads are the changes no other change names as a parent; each change's text is replayed with plain scalar
/// arrays along its primary line of history (a resolution's chosen version, or else the parent with the highest
/// lamport, then device), and the heads are grouped by text.
struct HistoryOracle {
    /// One version the document must show.
    struct Version: Equatable {
        /// The heads with this text, in causal order.
        var heads: [ChangeHash]
        /// The version's identity: the latest of its heads.
        var id: ChangeHash
        var text: String
    }

    private(set) var changes: [ChangeHash: Change] = [:]
    /// Every change, parents before children (Kahn's algorithm over the parent links).
    private(set) var order: [Change] = []
    /// Each change's strict ancestors, by parent links.
    private(set) var ancestors: [ChangeHash: Set<ChangeHash>] = [:]
    private(set) var texts: [ChangeHash: String] = [:]
    /// Operations that did not apply where the oracle replayed them (a replay that disagrees with the editor).
    private(set) var problems: [String] = []
    let heads: [Change]

    init(_ log: [Change]) {
        for change in log { changes[change.hash] = change }
        var waiting = changes.mapValues { Set($0.parents).count }
        var children: [ChangeHash: [ChangeHash]] = [:]
        for change in changes.values {
            for parent in Set(change.parents) {
                if changes[parent] == nil { problems.append("\(change.id) names a parent outside the log") }
                children[parent, default: []].append(change.hash)
            }
        }
        var ready = changes.values.filter { waiting[$0.hash] == 0 }.map(\.hash).sorted()
        while let next = ready.popLast() {
            order.append(changes[next]!)
            for child in (children[next] ?? []).sorted() {
                waiting[child]! -= 1
                if waiting[child] == 0 { ready.append(child) }
            }
        }
        if order.count != changes.count { problems.append("the parent links have a cycle or a hole") }
        let named = Set(changes.values.flatMap(\.parents))
        heads = changes.values.filter { !named.contains($0.hash) }.sorted { Self.precedes($0, $1) }
        for change in order {
            var past: Set<ChangeHash> = []
            for parent in change.parents {
                past.insert(parent)
                past.formUnion(ancestors[parent] ?? [])
            }
            ancestors[change.hash] = past
            texts[change.hash] = replay(change)
        }
    }

    /// Causal order: lamport, then device.
    static func precedes(_ first: Change, _ second: Change) -> Bool {
        (first.lamport, first.id.device) < (second.lamport, second.id.device)
    }

    /// Whether `first` happened before `second`, by parent links.
    func happenedBefore(_ first: ChangeHash, _ second: ChangeHash) -> Bool {
        ancestors[second]?.contains(first) ?? false
    }

    /// The versions: heads grouped by text, the current one first, then the others in causal order of their first
    /// head. The current one is the version with `shown` (the head a document shows) when that is still a head,
    /// and otherwise the one with the winning head (highest lamport, then device).
    func versions(showing shown: ChangeHash? = nil) -> [Version] {
        var result: [Version] = []
        for head in heads {
            let text = texts[head.hash]!
            if let index = result.firstIndex(where: { $0.text == text }) {
                result[index].heads.append(head.hash)
                result[index].id = head.hash
            } else {
                result.append(Version(heads: [head.hash], id: head.hash, text: text))
            }
        }
        let current = shown.flatMap { shown in heads.contains { $0.hash == shown } ? shown : nil } ?? heads.last?.hash
        if let current, let index = result.firstIndex(where: { $0.heads.contains(current) }) {
            result.insert(result.remove(at: index), at: 0)
        }
        return result
    }

    /// Pairs where the vectors disagree with the parent links about what happened before what.
    func vectorDisagreements() -> [String] {
        var found: [String] = []
        for first in order {
            for second in order where first.hash != second.hash {
                let byParents = happenedBefore(first.hash, second.hash)
                if byParents != second.vector.contains(first.id) {
                    found.append("\(first.id) before \(second.id): parents say \(byParents), vectors say \(!byParents)")
                }
            }
        }
        return found
    }

    private mutating func replay(_ change: Change) -> String {
        let parents = change.parents.compactMap { changes[$0] }
        let primary = parents.max { Self.precedes($0, $1) }
        var scalars = Array((primary.flatMap { texts[$0.hash] } ?? "").unicodeScalars)
        switch change.kind {
        case .baseline(let contents):
            return Self.text(of: contents)
        case .lifecycle:
            break
        case .resolution(let resolution):
            if let contents = resolution.contents { return Self.text(of: contents) }
            if let chosen = resolution.chosen.first { return texts[chosen] ?? "<missing \(chosen.shortHex)>" }
        case .edit(let edit):
            guard let operations = try? TextDocument.Operation.decodeGroup(edit.operations) else {
                problems.append("\(change.id) holds operations that do not decode")
                break
            }
            for operation in operations {
                switch operation {
                case .append(let text):
                    scalars += text.unicodeScalars
                case .insert(let position, let text):
                    guard position <= scalars.count else {
                        problems.append(
                            "\(change.id): \(operation) beyond the end of \(String(String.UnicodeScalarView(scalars)).debugDescription)"
                        )
                        continue
                    }
                    scalars.insert(contentsOf: text.unicodeScalars, at: position)
                case .delete(let position, let count):
                    guard position + count <= scalars.count else {
                        problems.append("\(change.id): \(operation) beyond the end")
                        continue
                    }
                    scalars.removeSubrange(position..<(position + count))
                case .replace(let text):
                    scalars = Array(text.unicodeScalars)
                }
            }
        }
        return String(String.UnicodeScalarView(scalars))
    }

    private static func text(of contents: Data) -> String {
        guard let decoded = try? DocumentContents(decoding: contents),
            let document = try? TextDocument(contents: decoded)
        else {
            return "<undecodable contents>"
        }
        return document.text
    }
}
