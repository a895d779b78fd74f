import FolioCore

/// Makes one device's changes as values: its sequence numbers, vectors and lamports, with an injected wall time.
struct ChangeWriter {
    let document: DocumentID
    let device: Device
    private(set) var seq: UInt64 = 0

    init(document: DocumentID, device: Device) {
        self.document = document
        self.device = device
    }

    /// A change of `kind` made on `parents` at `wallTime` (milliseconds).
    ///
    /// - Precondition: this device's previous change is in the parents' past.
    mutating func make(_ kind: ChangeKind, on parents: [Change], at wallTime: Int64) -> Change {
        var vector = VersionVector()
        for parent in parents { vector.merge(parent.vector) }
        precondition(vector[device.id] == seq, "a device's changes form one line")
        seq += 1
        vector.include(ChangeID(device: device.id, seq: seq))
        return Change(
            document: document, id: ChangeID(device: device.id, seq: seq), parents: parents.map(\.hash), vector: vector,
            lamport: (parents.map(\.lamport).max() ?? 0) + 1, wallTime: Timestamp(millisecondsSince1970: wallTime),
            kind: kind)
    }

    /// An edit of `operations` made on `parents`.
    mutating func edit<Model: DocumentModel>(
        _ operations: [Model.Operation], of _: Model.Type, on parents: [Change], at wallTime: Int64
    ) -> Change {
        make(.edit(Edit(operations: Model.Operation.encodeGroup(operations))), on: parents, at: wallTime)
    }
}
