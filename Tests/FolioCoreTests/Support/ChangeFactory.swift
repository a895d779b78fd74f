import FolioCore
import FolioTesting
import Foundation

/// Builds valid histories: each step names its author (an index into `devices`) and its parents (indices of earlier
/// steps); sequence numbers, vectors and lamport timestamps are derived the way a device derives them.
struct HistoryBuilder {
    let document: DocumentID
    let devices: [DeviceID]
    let start: Timestamp
    private(set) var changes: [Change] = []
    private var byID: [ChangeID: Change] = [:]

    init(
        document: DocumentID = TestDevices.document, devices: [DeviceID] = TestDevices.pool,
        start: Timestamp = Timestamp(millisecondsSince1970: 1_767_225_600_000)
    ) {
        self.document = document
        self.devices = devices
        self.start = start
    }

    /// Appends a change by `device` made on the changes at indices `parents`.
    ///
    /// - Precondition: the author's previous change (if any) is in the parents' causal past.
    @discardableResult
    mutating func append(device: Int, parents: [Int], kind: ChangeKind? = nil) -> Change {
        let parentChanges = parents.map { changes[$0] }
        var vector = parentChanges.reduce(VersionVector()) { $0.merging($1.vector) }
        let author = devices[device]
        let seq = UInt64(changes.count { $0.id.device == author }) + 1
        precondition(
            vector[author] == seq - 1,
            "step \(changes.count): device \(device)'s previous change must be in the parents' past")
        let id = ChangeID(device: author, seq: seq)
        vector.include(id)
        let change = Change(
            document: document, id: id, parents: parentChanges.map(\.hash), vector: vector,
            lamport: (parentChanges.map(\.lamport).max() ?? 0) + 1,
            wallTime: start.advanced(by: Int64(changes.count) * 1000),
            kind: kind ?? .edit(Edit(operations: Data("step \(changes.count)".utf8))))
        changes.append(change)
        byID[id] = change
        return change
    }

    /// The changes with no successor among those that `vector` names: what a device that has seen exactly `vector`
    /// uses as parents.
    func heads(of vector: VersionVector) -> [Change] {
        let candidates = vector.entries.map { byID[ChangeID(device: $0.device, seq: $0.seq)]! }
        return candidates.filter { candidate in
            !candidates.contains { $0.id != candidate.id && $0.vector.contains(candidate.id) }
        }
    }

    /// A history from a list of `(device, parents)` steps.
    static func history(_ steps: [(device: Int, parents: [Int])], document: DocumentID = TestDevices.document)
        -> [Change]
    {
        var builder = HistoryBuilder(document: document)
        for step in steps { builder.append(device: step.device, parents: step.parents) }
        return builder.changes
    }

    /// A random valid history: each step's author has seen its own previous change and the pasts of up to two other
    /// random changes, and makes its change on the heads of what it has seen.
    static func random(steps: Int, deviceCount: Int, using generator: inout SplitMix64) -> [Change] {
        var builder = HistoryBuilder()
        var lastIndex: [Int: Int] = [:]
        for _ in 0..<steps {
            let device = generator.int(in: 0...(deviceCount - 1))
            var seen = VersionVector()
            if let own = lastIndex[device] { seen.merge(builder.changes[own].vector) }
            if !builder.changes.isEmpty {
                for _ in 0..<generator.int(in: 0...2) {
                    seen.merge(builder.changes[generator.int(in: 0...(builder.changes.count - 1))].vector)
                }
            }
            let parents = builder.heads(of: seen).map { head in builder.changes.firstIndex { $0.id == head.id }! }
            builder.append(device: device, parents: parents)
            lastIndex[device] = builder.changes.count - 1
        }
        return builder.changes
    }
}

/// A hash that names no change, for tests that need one.
func fakeHash(_ label: String) -> ChangeHash {
    ChangeHash(hashing: Array(label.utf8))
}
