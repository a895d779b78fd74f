import FolioCore
import FolioStore
import FolioSync
import FolioTestWorkPool
import FolioTesting
import Testing

/// The persons devices act for, as hellos in message format 4 pass them on.
@Suite(.workPool) struct DevicePeopleTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A hello teaches a device the persons it did not know: of a device new to it, of a device it knew without
    /// one; a person it knew is kept, and so is everything about itself.
    @Test func aHelloTeachesPersonsWithoutReplacingKnownOnes() throws {
        let store = try directory.openStore(for: Device.named("A"))
        let mac = Device(id: Device.named("Mac").id, name: "Mac")
        let phone = Device(id: Device.named("Phone").id, name: "Phone", person: "Cy")
        try store.devices.register([mac, phone])
        var driver = try SyncDriver(store: store, role: .initiator, id: 1, formats: .runsWhenOffered)
        _ = try driver.start()
        let ben = Device(id: Device.named("Ben").id, name: "", person: "Ben")
        let hello = SyncMessage.hello(
            SyncHello(
                device: ben, session: 2, replyTo: 1, vectors: [:],
                devices: [
                    Device(id: mac.id, name: "Another name", person: "Mia"),
                    Device(id: phone.id, name: "Phone", person: "Dan"),
                    Device(id: store.localDevice.id, name: "Not me", person: "Eve"),
                ]))
        _ = try driver.receive(hello.encoded(format: SyncMessage.peopleFormatVersion))
        #expect(driver.writtenFormat == SyncMessage.peopleFormatVersion, "the peer writes format 4, so it reads it")
        let expected = [
            store.localDevice, Device(id: mac.id, name: "Mac", person: "Mia"), phone, ben,
        ]
        .sorted { $0.id < $1.id }
        #expect(try store.devices.all() == expected)
    }
}
