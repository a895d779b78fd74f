import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// `ChangeLogStore.snapshot(ofStoreAt:to:)` copies a store, its unfolded log included, without writing anything
/// beside it, and refuses a file that is not a store.
@Suite(.workPool) struct SnapshotTests {
    let directory: TemporaryDirectory
    let device = Device.named("A")

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// The files in the test's directory whose names start with `prefix`, with their bytes.
    func files(_ prefix: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) where name.hasPrefix(prefix)
        {
            files[name] = try Data(contentsOf: directory.file(name))
        }
        return files
    }

    @Test func aStoreLeftByAKilledProcessIsCopiedWithItsLogAndLeftAsItWas() throws {
        var store: ChangeLogStore? = try ChangeLogStore(
            at: directory.file("A.sqlite"), device: device, clock: Fixtures.clock(), access: .exclusive)
        try store!.append((1...3).map { Fixtures.edit("edit \($0)") }, to: Fixtures.document)
        try CrashSimulation.leaveLogOnRelease(of: store!)
        store = nil
        let before = try files("A.sqlite")
        #expect(before.keys.sorted() == ["A.sqlite", "A.sqlite-wal"], "the changes are in the unfolded log")

        try ChangeLogStore.snapshot(ofStoreAt: directory.file("A.sqlite"), to: directory.file("copy.sqlite"))
        #expect(try files("A.sqlite") == before, "nothing was written beside the store, not even a shared-memory file")
        let copy = try ChangeLogStore(at: directory.file("copy.sqlite"), device: device, clock: Fixtures.clock())
        #expect(try copy.changes(of: Fixtures.document).map(\.id.seq) == [1, 2, 3])
        try copy.checkInvariants()
    }

    @Test func anOpenStoreIsCopiedAsOfItsLastCommit() throws {
        let store = try directory.openStore("A.sqlite", as: device)
        try store.append([Fixtures.edit("first")], to: Fixtures.document)
        try ChangeLogStore.snapshot(ofStoreAt: store.url, to: directory.file("copy.sqlite"))
        try store.append([Fixtures.edit("second")], to: Fixtures.document)
        let copy = try ChangeLogStore(at: directory.file("copy.sqlite"), device: device, clock: Fixtures.clock())
        #expect(try copy.changeCount() == 1)
        try copy.checkInvariants()
    }

    @Test func aFileThatIsNotAStoreIsRefusedAndNothingIsLeft() throws {
        try Data("not a database at all".utf8).write(to: directory.file("fake.sqlite"))
        let refused = #expect(throws: StoreError.self) {
            try ChangeLogStore.snapshot(ofStoreAt: directory.file("fake.sqlite"), to: directory.file("copy.sqlite"))
        }
        #expect(refused?.code == .notAStore)
        let absent = #expect(throws: StoreError.self) {
            try ChangeLogStore.snapshot(ofStoreAt: directory.file("absent.sqlite"), to: directory.file("copy.sqlite"))
        }
        #expect(absent?.code == .notAStore)
        #expect(try files("copy").isEmpty)
    }

    @Test func anExistingFileIsNeverOverwrittenNorRemoved() throws {
        let store = try directory.openStore("A.sqlite", as: device)
        try store.append([Fixtures.edit("first")], to: Fixtures.document)
        try Data("someone's file".utf8).write(to: directory.file("copy.sqlite-wal"))
        let refused = #expect(throws: StoreError.self) {
            try ChangeLogStore.snapshot(ofStoreAt: store.url, to: directory.file("copy.sqlite"))
        }
        #expect(refused?.message.contains("already there") == true)
        #expect(try files("copy") == ["copy.sqlite-wal": Data("someone's file".utf8)])
    }
}
