import FolioCore
import FolioStore
import FolioSync
import FolioTestWorkPool
import FolioTesting
import Testing

/// The persons devices act for, as hellos in message format 4 pass them on, and the proof of a device's key an
/// initiator sends once it knows the responder's session.
@Suite(.workPool) struct DevicePeopleTests {
    let directory: TemporaryDirectory
    static let mac = Device(id: Device.named("Mac").id, name: "Mac")
    static let phone = Device(id: Device.named("Phone").id, name: "Phone", person: "Cy")
    static let ben = Device(id: Device.named("Ben").id, name: "", person: "Ben")

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A responder's hello in format 4 that says persons of the speaker, of devices the store knows (with and
    /// without one), of a device new to it and of the store's own device.
    static func hello(to store: ChangeLogStore, replyTo: UInt64) -> [UInt8] {
        SyncMessage.hello(
            SyncHello(
                device: ben, session: 2, replyTo: replyTo, vectors: [:],
                devices: [
                    Device(id: mac.id, name: "Another name", person: "Mia"),
                    Device(id: phone.id, name: "Phone", person: "Dan"),
                    Device(id: Device.named("Zoe").id, name: "Zoe's", person: "Zoe"),
                    Device(id: store.localDevice.id, name: "Not me", person: "Eve"),
                ])
        )
        .encoded(format: SyncMessage.peopleFormatVersion)
    }

    /// An ordinary peer could say anything of other devices: its hello teaches the person of its own device only,
    /// when the store knows none, and names as before.
    @Test func aPeerTeachesOnlyItsOwnPerson() throws {
        let store = try directory.openStore(for: Device.named("A"))
        try store.devices.register([Self.mac, Self.phone])
        var driver = try SyncDriver(store: store, role: .initiator, id: 1, formats: .runsWhenOffered)
        _ = try driver.start()
        _ = try driver.receive(Self.hello(to: store, replyTo: 1))
        #expect(driver.writtenFormat == SyncMessage.peopleFormatVersion, "the peer writes format 4, so it reads it")
        let expected = [
            store.localDevice, Self.mac, Self.phone, Self.ben, Device(id: Device.named("Zoe").id, name: "Zoe's"),
        ]
        #expect(try store.devices.all() == expected.sorted { $0.id < $1.id })
    }

    /// A server's word on persons is taken (`takesPersonsFromPeer`): it replaces what the store knew, for every
    /// device but the store's own.
    @Test func aServersWordOnPersonsIsTaken() throws {
        let store = try directory.openStore(for: Device.named("A"))
        try store.devices.register([Self.mac, Self.phone])
        var driver = try SyncDriver(
            store: store, role: .initiator, id: 1, formats: .runsWhenOffered, takesPersonsFromPeer: true)
        _ = try driver.start()
        _ = try driver.receive(Self.hello(to: store, replyTo: 1))
        let expected = [
            store.localDevice, Device(id: Self.mac.id, name: "Mac", person: "Mia"),
            Device(id: Self.phone.id, name: "Phone", person: "Dan"), Self.ben,
            Device(id: Device.named("Zoe").id, name: "Zoe's", person: "Zoe"),
        ]
        #expect(try store.devices.all() == expected.sorted { $0.id < $1.id })
    }

    /// Once the responder's hello in format 4 arrives, the initiator sends its hello again before anything else:
    /// only its device, with a proof of its key bound to the responder's session. Once a session, and never from a
    /// responder, from a driver that writes format 3, or after a hello in format 3.
    @Test func theInitiatorProvesItsKeyOnceTheResponderReadsFormat4() throws {
        var device = Device.named("A")
        device.name = "iPad"
        device.person = "Anna"
        let store = try directory.openStore(for: device)
        var driver = try SyncDriver(store: store, role: .initiator, id: 1, formats: .runsWhenOffered)
        #expect(try driver.start().allSatisfy { SyncMessage.format(of: $0) == SyncMessage.formatVersion })
        let sent = try driver.receive(Self.hello(to: store, replyTo: 1))
        let first = try #require(sent.first)
        #expect(SyncMessage.format(of: first) == SyncMessage.peopleFormatVersion)
        guard case .hello(let proven) = try SyncMessage(decoding: first) else {
            Issue.record("the first message after the responder's hello is not a hello")
            return
        }
        let proof = try #require(proven.proof)
        #expect(proven.device == store.localDevice && proven.session == 1 && proven.vectors.isEmpty)
        #expect(proof.holds(for: store.localDevice, session: 2))
        #expect(!proof.holds(for: store.localDevice, session: 3), "bound to the responder's session")
        #expect(!proof.holds(for: Device(id: device.id, name: "iPad", person: "Mallory"), session: 2))
        #expect(!proof.holds(for: Self.mac, session: 2), "another device's")
        // Once a session.
        let again = try driver.receive(Self.hello(to: store, replyTo: 1))
        #expect(
            !again.contains { bytes in
                if case .hello = try? SyncMessage(decoding: bytes) { return true } else { return false }
            })

        // A responder, a driver of format 3, and a hello in format 3: no proof.
        var responder = try SyncDriver(store: store, role: .responder, id: 5, formats: .runsWhenOffered)
        let asked = SyncMessage.hello(SyncHello(device: Self.ben, session: 6, vectors: [:]))
        let answered = try responder.receive(asked.encoded(format: SyncMessage.peopleFormatVersion))
        #expect(
            answered.compactMap { try? SyncMessage(decoding: $0) }.allSatisfy { message in
                if case .hello(let hello) = message { return hello.proof == nil } else { return true }
            })
        var runs = try SyncDriver(store: store, role: .initiator, id: 7, formats: .runs)
        _ = try runs.start()
        let newer = SyncMessage.hello(SyncHello(device: Self.ben, session: 8, replyTo: 7, vectors: [:]))
        for bytes in try runs.receive(newer.encoded(format: SyncMessage.peopleFormatVersion)) {
            #expect(SyncMessage.format(of: bytes) == SyncMessage.runFormatVersion, "a driver of format 3 stays there")
        }
        var offering = try SyncDriver(store: store, role: .initiator, id: 9, formats: .runsWhenOffered)
        _ = try offering.start()
        let three = SyncMessage.hello(SyncHello(device: Self.ben, session: 10, replyTo: 9, vectors: [:]))
        for bytes in try offering.receive(three.encoded(format: SyncMessage.runFormatVersion)) {
            guard case .hello(let hello) = try SyncMessage(decoding: bytes) else { continue }
            #expect(hello.proof == nil)
        }
    }
}
