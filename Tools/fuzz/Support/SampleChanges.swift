import FolioCore
import Foundation

/// Honest changes of every kind, for seed corpora: a short history of one document on two devices.
enum SampleChanges {
    static let document = FuzzIDs.document(1)
    static let first = FuzzIDs.device(1)
    static let second = FuzzIDs.device(2)

    /// Changes in causal order: a creation, edits on both devices (concurrent, then merged), an undo, renames, a
    /// move, a delete and a restore, a baseline and resolutions.
    static func history(of document: DocumentID = document) -> [Change] {
        var changes: [Change] = []
        var vector = VersionVector()
        var lamport: UInt64 = 0
        func add(_ device: DeviceID, _ kind: ChangeKind, parents: [ChangeHash]? = nil, merging others: [Change] = []) {
            let seq = vector[device] + 1
            var context = vector
            for other in others { context.merge(other.vector) }
            context.include(ChangeID(device: device, seq: seq))
            lamport += 1
            let heads = parents ?? changes.last.map { [$0.hash] } ?? []
            let change = Change(
                document: document, id: ChangeID(device: device, seq: seq), parents: heads, vector: context,
                lamport: lamport, wallTime: FuzzIDs.epoch.advanced(by: Int64(lamport) * 1000), kind: kind)
            vector.merge(change.vector)
            changes.append(change)
        }
        add(first, .lifecycle(.create(name: "Notes", type: "com.folio.text", container: .local)))
        add(first, .edit(Edit(operations: Data([1, 0, 5, 72, 101, 108, 108, 111]))))
        add(second, .edit(Edit(operations: Data([1, 2, 1, 33]))))
        add(first, .edit(Edit(operations: Data([1, 1, 0, 1]), intent: .undo(of: changes[1].id))))
        add(second, .lifecycle(.rename(to: "Ideas é")))
        add(first, .lifecycle(.move(to: .shared)))
        add(second, .baseline(contents: DocumentContents.data(Data("baseline\n".utf8)).encoded()))
        add(first, .lifecycle(.delete))
        add(second, .lifecycle(.restore))
        let a = changes[changes.count - 1]
        add(first, .edit(Edit(operations: Data([1, 2, 2, 104, 105]), intent: .redo(of: changes[3].id))))
        add(second, .resolution(Resolution(strategy: .latestWins, chosen: [a.hash], discarded: [changes[2].hash])))
        add(
            first,
            .resolution(
                Resolution(
                    strategy: .custom("pick"), chosen: [changes[4].hash], discarded: [],
                    contents: DocumentContents.data(Data("merged".utf8)).encoded())))
        add(second, .resolution(Resolution(strategy: .merge, chosen: [], discarded: [])))
        add(first, .resolution(Resolution(strategy: .keepBoth, chosen: [], discarded: [])))
        add(second, .resolution(Resolution(strategy: .userChoice, chosen: [], discarded: [])))
        return changes
    }

    /// The heads the sample devices sign for `changes`: each one's latest change among them.
    static func heads(of changes: [Change]) -> [SignedHead] {
        var latest: [DeviceID: Change] = [:]
        for change in changes where change.id.seq > latest[change.id.device]?.id.seq ?? 0 {
            latest[change.id.device] = change
        }
        return [(first, FuzzIDs.key(1)), (second, FuzzIDs.key(2))].compactMap { device, key in
            latest[device].map { SignedHead(signing: $0, with: key) }
        }
        .sorted { $0.change.device < $1.change.device }
    }
}
