import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Blobs, the device registry and sync cursors.
@Suite(.workPool) struct RegistryTests {
    let directory: TemporaryDirectory
    let device = Device.named("A")

    init() throws {
        directory = try TemporaryDirectory()
    }

    @Test func blobsAreStoredOnceByContent() throws {
        var store = try directory.openStore(for: device)
        let small = Data("hello".utf8)
        let large = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let smallHash = try store.checkpoints.putBlob(small)
        try store.checkInvariants()
        #expect(smallHash == ContentHash(hashing: small))
        #expect(try store.checkpoints.putBlob(small) == smallHash, "storing again gives the same hash")
        try store.checkInvariants()
        let largeHash = try store.checkpoints.putBlob(large)
        try store.checkInvariants()
        let emptyHash = try store.checkpoints.putBlob(Data())
        try store.checkInvariants()

        #expect(try store.checkpoints.blob(smallHash) == small)
        #expect(try store.checkpoints.blob(largeHash) == large)
        #expect(try store.checkpoints.blob(emptyHash) == Data())
        #expect(try store.checkpoints.blob(ContentHash(hashing: Data("absent".utf8))) == nil)

        try store.close()
        store = try directory.openStore(for: device)
        #expect(try store.checkpoints.blob(largeHash) == large)
    }

    @Test func devicesAreRegisteredWithTheirNames() throws {
        let history = try SampleHistory.make(in: directory)
        // A device of its own: a store takes no change in its own device's name that it did not make.
        let device = Device.named("Registry")
        var store = try directory.openStore("registry.sqlite", as: device)
        #expect(try store.devices.all() == [device], "opening registers the local device")

        // Devices seen only through their changes have no name.
        try store.ingest(trusting: history.changes)
        try store.checkInvariants()
        let unnamed = try store.devices.all()
        #expect(unnamed.map(\.id) == [history.a.id, history.b.id, history.c.id, device.id].sorted())
        #expect(unnamed.first { $0.id == history.b.id }?.name == "")

        try store.devices.register(Device(id: history.b.id, name: "Bea's iPad"))
        try store.checkInvariants()
        try store.devices.register(Device(id: history.b.id, name: "Bea's old iPad"))
        try store.checkInvariants()
        let stranger = Device(id: Device.named("Z").id, name: "Zed's Mac")
        try store.devices.register(stranger)
        try store.checkInvariants()

        let devices = try store.devices.all()
        #expect(devices.map(\.id) == devices.map(\.id).sorted())
        #expect(devices.first { $0.id == history.b.id }?.name == "Bea's old iPad")
        #expect(devices.first { $0.id == stranger.id } == stranger)
        #expect(devices.count == 5)

        try store.close()
        store = try directory.openStore("registry.sqlite", as: device)
        #expect(try store.devices.all() == devices)
    }

    /// A device's person is kept beside its name: the local device's as the store is opened with it, a peer's as
    /// registered (replaced by a later registration, cut and cleaned as names are), and both survive a reopening.
    @Test(arguments: [StoreAccess.shared, .exclusive])
    func devicesAreRegisteredWithTheirPersons(access: StoreAccess) throws {
        let url = directory.file("people.sqlite")
        let key = DeviceKey.named("Anna")
        var store = try ChangeLogStore(at: url, key: key, deviceName: "iPad", person: "Anna", access: access)
        let anna = Device(id: key.id, name: "iPad", person: "Anna")
        #expect(store.localDevice == anna)
        #expect(try store.devices.all() == [anna])
        let ben = Device(id: Device.named("Ben").id, name: "Mac", person: "Ben")
        try store.devices.register(ben)
        let cut = Device(id: Device.named("Cy").id, name: "", person: "C\0y" + String(repeating: "é", count: 600))
        try store.devices.register(cut)
        let moved = Device(id: ben.id, name: "Mac", person: "Benedikt")
        try store.devices.register(moved)
        try store.checkInvariants()
        let stored = try store.devices.all()
        #expect(stored.first { $0.id == ben.id } == moved, "a later registration replaces the person")
        let kept = try #require(stored.first { $0.id == cut.id }?.person)
        #expect(kept.hasPrefix("C\u{FFFD}y") && kept.utf8.count <= 1_024, "cleaned and cut as a name is")
        #expect(try store.verify().isSound)
        try store.close()

        #expect(try DeviceRegistry.localIdentity(ofStoreAt: url)?.person == "Anna")
        store = try ChangeLogStore(at: url, key: key, deviceName: "iPad", person: "Anna", access: access)
        #expect(try store.devices.all() == stored)
        try store.close()
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func severalDevicesAreRegisteredAtOnce(access: StoreAccess) throws {
        let store = try directory.openStore(for: device, access: access)
        let b = Device(id: Device.named("B").id, name: "Bea's iPad")
        let c = Device(id: Device.named("C").id, name: "Cy's Mac")
        try store.devices.register([])
        try store.devices.register([c, b])
        #expect(try store.devices.all() == [device, b, c].sorted { $0.id < $1.id })
        // Known names change nothing; a new name replaces the old one.
        let renamed = Device(id: b.id, name: "Bea's phone")
        try store.devices.register([c, renamed])
        #expect(try store.devices.all() == [device, renamed, c].sorted { $0.id < $1.id })
        try store.checkInvariants()
        try store.close()
        #expect(try directory.openStore(for: device).devices.all() == [device, renamed, c].sorted { $0.id < $1.id })
    }

    @Test func reopeningAsARenamedDeviceUpdatesItsName() throws {
        var store = try directory.openStore(for: device)
        try store.close()
        store = try directory.openStore("A.sqlite", as: Device(id: device.id, name: "A, renamed"))
        #expect(try store.devices.all() == [Device(id: device.id, name: "A, renamed")])
    }

    @Test func syncCursorsRoundTripPerPeerAndDocument() throws {
        let document = Fixtures.document
        let other = Fixtures.otherDocument
        let b = Device.named("B").id
        let c = Device.named("C").id
        var store = try directory.openStore(for: device)
        #expect(try store.syncCursors.vector(SyncCursorKey(peer: "server"), of: document) == VersionVector())

        let first = VersionVector.of([(b, 3), (c, 1)])
        try store.syncCursors.set(first, SyncCursorKey(peer: "server"), of: document)
        try store.checkInvariants()
        try store.syncCursors.set(VersionVector.of([(c, 9)]), SyncCursorKey(peer: "laptop"), of: document)
        try store.checkInvariants()
        try store.syncCursors.set(VersionVector.of([(b, 1)]), SyncCursorKey(peer: "server"), of: other)
        try store.checkInvariants()
        #expect(try store.syncCursors.vector(SyncCursorKey(peer: "server"), of: document) == first)
        #expect(try store.syncCursors.vector(SyncCursorKey(peer: "laptop"), of: document) == VersionVector.of([(c, 9)]))
        #expect(try store.syncCursors.vector(SyncCursorKey(peer: "server"), of: other) == VersionVector.of([(b, 1)]))
        #expect(try store.syncCursors.vector(SyncCursorKey(peer: "laptop"), of: other) == VersionVector())

        let moved = VersionVector.of([(b, 5), (c, 2), (device.id, 1)])
        try store.syncCursors.set(moved, SyncCursorKey(peer: "server"), of: document)
        try store.checkInvariants()
        try store.syncCursors.set(VersionVector(), SyncCursorKey(peer: "laptop"), of: document)
        try store.checkInvariants()

        try store.close()
        store = try directory.openStore(for: device)
        #expect(try store.syncCursors.vector(SyncCursorKey(peer: "server"), of: document) == moved)
        #expect(try store.syncCursors.vector(SyncCursorKey(peer: "laptop"), of: document) == VersionVector())
        #expect(try store.syncCursors.vector(SyncCursorKey(peer: "server"), of: other) == VersionVector.of([(b, 1)]))
    }

    @Test func aSyncCursorAloneDoesNotMakeADocument() throws {
        let store = try directory.openStore(for: device)
        try store.syncCursors.set(
            VersionVector.of([(Device.named("B").id, 2)]), SyncCursorKey(peer: "server"), of: Fixtures.document)
        try store.checkInvariants()
        #expect(try store.documents().isEmpty, "documents() lists documents with changes or waiting changes only")
        #expect(try store.vector(of: Fixtures.document).isEmpty)

        // A document whose only change waits is listed.
        let history = try SampleHistory.make(in: directory, document: Fixtures.otherDocument)
        try store.ingest(trusting: [history["a2"]])
        try store.checkInvariants()
        #expect(try store.documents() == [Fixtures.otherDocument])
        try store.ingest(trusting: [history["a1"]])
        try store.checkInvariants()
        #expect(try store.documents() == [Fixtures.otherDocument])
        try store.append(Fixtures.edit("now it has one"), to: Fixtures.document)
        try store.checkInvariants()
        #expect(try store.documents() == [Fixtures.document, Fixtures.otherDocument].sorted())
    }

    @Test func localStateIsReadPerDocumentAndAcrossDocuments() throws {
        let store = try directory.openStore(for: device)
        let state = store.localState
        let file = LocalStateKey("file")
        let undo = LocalStateKey("undo")
        try state.set([file: Data("a.txt".utf8), undo: Data([1])], of: Fixtures.document)
        try state.set([file: Data("b.txt".utf8)], of: Fixtures.otherDocument)
        #expect(try state.value(file, of: Fixtures.document) == Data("a.txt".utf8))
        let files = try state.values(file)
        #expect(files.map(\.document).sorted() == [Fixtures.document, Fixtures.otherDocument].sorted())
        #expect(Set(files.map(\.value)) == [Data("a.txt".utf8), Data("b.txt".utf8)])
        #expect(try state.values(undo).map(\.document) == [Fixtures.document])

        try state.set([file: nil], of: Fixtures.document)
        #expect(try state.values(file).map(\.document) == [Fixtures.otherDocument])
        #expect(try state.values(LocalStateKey("absent")).isEmpty)
    }
}
