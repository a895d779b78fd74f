import FolioConflicts
import FolioCore

/// Three devices and a document: identities and names fixed, so every run builds the same changes.
enum Fixture {
    static let document = DocumentID(UUIDBytes(high: 0xD0C, low: 1))
    static let iPad = Device(id: DeviceID(UUIDBytes(high: 1, low: 1)), name: "iPad")
    static let mac = Device(id: DeviceID(UUIDBytes(high: 2, low: 2)), name: "Mac")
    static let phone = Device(id: DeviceID(UUIDBytes(high: 3, low: 3)), name: "Phone")
    /// The device that receives and settles.
    static let receiver = Device(id: DeviceID(UUIDBytes(high: 4, low: 4)), name: "Receiver")
    static let devices: [DeviceID: Device] = Dictionary(
        uniqueKeysWithValues: [iPad, mac, phone, receiver].map { ($0.id, $0) })

    static func writer(_ device: Device) -> ChangeWriter { ChangeWriter(document: document, device: device) }

    static func observer(_ strategy: ConflictStrategy, settles: Bool = true) -> Observer<Notes> {
        Observer(
            document: document, device: receiver, policy: ConflictPolicy(default: strategy), settles: settles,
            devices: devices)
    }

    /// The base every device starts from (made by the iPad): a create, then an edit with `words`.
    static func base(_ words: [String], title: String = "t", writer: inout ChangeWriter) -> [Change] {
        let create = writer.make(
            .lifecycle(.create(name: "Notes", type: Notes.documentType.identifier, container: .shared)), on: [], at: 1)
        let edit = writer.edit(
            [Notes.Operation.title(title)] + words.map { .add($0) }, of: Notes.self, on: [create], at: 2)
        return [create, edit]
    }
}
