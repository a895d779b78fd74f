import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A store held in memory keeps the same log as one on disk, rolls back as one does, writes nothing to disk, and
/// copies itself (or a store on disk) into an independent store in memory.
@Suite(.workPool) struct InMemoryStoreTests {
    let directory: TemporaryDirectory
    let a = Device.named("A")
    let b = Device.named("B")

    init() throws {
        directory = try TemporaryDirectory()
    }

    @Test func aStoreInMemoryKeepsTheSameLogAsOneOnDisk() throws {
        let memory = try ChangeLogStore(inMemoryNamed: "scratch", device: a, clock: Fixtures.clock())
        let disk = try directory.openStore(for: a)
        for store in [memory, disk] {
            try store.append((1...4).map { Fixtures.edit("edit \($0)") }, to: Fixtures.document)
            try store.append([Fixtures.edit("other")], to: Fixtures.otherDocument)
        }
        #expect(memory.isInMemory && !disk.isInMemory)
        #expect(memory.url.absoluteString == "memory:scratch")
        #expect(memory.access == .exclusive && memory.durability == .off)
        #expect(try memory.changes(of: Fixtures.document) == disk.changes(of: Fixtures.document))
        #expect(try memory.summaries().map(\.vector) == disk.summaries().map(\.vector))
        #expect(try memory.devices.all() == disk.devices.all())
        try memory.checkInvariants(checkingPages: true)
        try memory.close()
        #expect(!FileManager.default.fileExists(atPath: memory.url.path), "nothing is written under its name")
    }

    @Test func aFailedIngestRollsBackInMemory() throws {
        let original = try directory.openStore(for: b).append(Fixtures.edit("original"), to: Fixtures.document)
        let clash = try directory.openStore("clone.sqlite", as: b).append(Fixtures.edit("clone"), to: Fixtures.document)
        let valid = try directory.openStore(for: a).append(Fixtures.edit("valid"), to: Fixtures.otherDocument)
        let store = try ChangeLogStore(inMemoryNamed: "cloud", device: Device.named("C"), clock: Fixtures.clock())
        try store.ingest(trusting: [original])
        let error = #expect(throws: StoreError.self) { try store.ingest(trusting: [valid, clash]) }
        #expect(error?.code == .integrity)
        #expect(try store.changeCount() == 1)
        #expect(try store.vector(of: Fixtures.otherDocument).isEmpty)
        try store.checkInvariants()
        #expect(try store.ingest(trusting: [valid]).applied == [valid.id])
        try store.checkInvariants()
    }

    @Test func aCopyInMemoryHoldsTheLogAndGoesItsOwnWay() throws {
        let disk = try directory.openStore(for: a, access: .exclusive)
        try disk.append((1...3).map { Fixtures.edit("edit \($0)") }, to: Fixtures.document)
        let copy = try disk.copyInMemory(named: "copy")
        #expect(copy.isInMemory && copy.localDevice == disk.localDevice)
        #expect(try copy.changes(of: Fixtures.document) == disk.changes(of: Fixtures.document))
        try copy.checkInvariants()

        // Each goes on alone: what one appends, the other does not see.
        let onCopy = try copy.append(Fixtures.edit("on the copy"), to: Fixtures.document)
        let onDisk = try disk.append(Fixtures.edit("on disk"), to: Fixtures.otherDocument)
        #expect(try disk.change(onCopy.hash, of: Fixtures.document) == nil)
        #expect(try copy.vector(of: Fixtures.otherDocument).isEmpty)
        #expect(try disk.changeCount() == 4 && copy.changeCount() == 4)

        // A copy of the copy carries what the copy added.
        let second = try copy.copyInMemory(named: "second")
        #expect(try second.change(onCopy.hash, of: Fixtures.document) == onCopy)
        #expect(try second.change(onDisk.hash, of: Fixtures.otherDocument) == nil)
        try second.checkInvariants(checkingPages: true)
    }
}
