// records-operations: a group of records operations decoded from untrusted bytes, under the undo law.
// A group of `RecordsDocument.Operation`s decoded from untrusted bytes (an edit's payload) and
// applied to a few records. Oracles: `OperationLaws` and the records' own invariants (the id index).
import FolioCore
import FolioModels
import Foundation

enum Harness {
    static let start: RecordsDocument = {
        do {
            return try RecordsDocument(records: [
                .init(id: "r1", fields: ["name": "Ada", "é": "e\u{301}"]),
                .init(id: "r2", fields: ["name": "Grace"]),
            ])
        } catch {
            fatalError("cannot make the starting records: \(error)")
        }
    }()

    static func run(_ input: UnsafeRawBufferPointer) {
        OperationLaws<RecordsDocument>.check(group: Array(input), from: start) { $0._checkInvariants() }
    }

    static func seeds() -> [[UInt8]] {
        typealias Op = RecordsDocument.Operation
        let groups: [[Op]] = [
            [.add(record: "r3", fields: ["a": "1", "b": "2"])],
            [.set(record: "r1", field: "name", value: "Lovelace"), .set(record: "r1", field: "name", value: "Byron")],
            [
                .add(record: "r4", fields: [:]), .set(record: "r4", field: "x", value: "y"),
                .unset(record: "r4", field: "x"),
            ],
            [
                .insert(record: "r0", fields: ["k": "v"], at: 0), .remove(record: "r2"),
                .insert(record: "r5", fields: [:], at: 2),
            ],
            [.set(record: "r1", field: "e\u{301}", value: "composed?"), .unset(record: "r1", field: "é")],
            [.remove(record: "missing"), .insert(record: "r6", fields: [:], at: -1)],
        ]
        return groups.map { Array(Op.encodeGroup($0)) }
    }
}
