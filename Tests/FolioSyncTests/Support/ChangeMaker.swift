import FolioCore

/// Builds changes by hand, as a device would make them, without a store.
struct ChangeMaker {
    let document: DocumentID
    private(set) var made: [Change] = []

    init(document: DocumentID) {
        self.document = document
    }

    /// Makes `device`'s next change on `parents` (which it has seen), returning it.
    @discardableResult
    mutating func make(_ device: Device, on parents: [Change] = [], _ text: String) -> Change {
        let own = made.filter { $0.id.device == device.id }
        var vector = VersionVector()
        var lamport: UInt64 = 0
        var heads = parents
        if let last = own.last, !parents.contains(where: { $0.vector.contains(last.id) }) { heads.append(last) }
        for parent in heads {
            vector.merge(parent.vector)
            lamport = max(lamport, parent.lamport)
        }
        let id = ChangeID(device: device.id, seq: UInt64(own.count + 1))
        vector.include(id)
        let change = Change(
            document: document, id: id, parents: heads.map(\.hash), vector: vector, lamport: lamport + 1,
            wallTime: Fixtures.start, kind: Fixtures.edit(text))
        made.append(change)
        return change
    }
}
