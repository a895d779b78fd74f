import FolioCore
import FolioFiles
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Faults injected into the file calls of a snapshot and of a new store's first image: a failed step throws, leaves
/// no partial copy, and leaves what was there before as it was.
@Suite(.workPool) struct SnapshotFaultTests {
    let directory: TemporaryDirectory
    let device = Device.named("A")

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A store with its changes in its unfolded log (`A.sqlite` and `A.sqlite-wal`), left as a killed process leaves it.
    private func storeWithLog() throws -> URL {
        var store: ChangeLogStore? = try directory.openStore(for: device, access: .exclusive)
        try store!.append((1...3).map { Fixtures.edit("edit \($0)") }, to: Fixtures.document)
        try CrashSimulation.leaveLogOnRelease(of: store!)
        store = nil
        return directory.file("A.sqlite")
    }

    /// The items in the test's directory whose names start with `prefix`, with their bytes.
    private func files(_ prefix: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try directory.fileNames() where name.hasPrefix(prefix) {
            files[name] = try Data(contentsOf: directory.file(name))
        }
        return files
    }

    @Test(arguments: [
        (FaultInjectingFileSystem.Step.Kind.copyFile, 1),
        (.synchronizeFile, 0),
        (.link, 1),  // the store file's, after the log's
        (.synchronizeDirectory, 0),
    ])
    func aSnapshotWhoseStepFailsThrowsLeavesNoCopyAndThePreviousOneIntact(
        kind: FaultInjectingFileSystem.Step.Kind, occurrence: Int
    ) throws {
        let source = try storeWithLog()
        try ChangeLogStore.snapshot(ofStoreAt: source, to: directory.file("first.sqlite"))
        let first = try files("first")
        #expect(first.keys.sorted() == ["first.sqlite", "first.sqlite-wal"])

        let dryRun = FaultInjectingFileSystem()
        try ChangeLogStore.snapshot(ofStoreAt: source, to: directory.file("dry.sqlite"), fileSystem: dryRun)
        let step = try #require(
            dryRun.steps.indices.filter { dryRun.steps[$0].kind == kind }.dropFirst(occurrence).first,
            "\(dryRun.steps)")

        let failing = FaultInjectingFileSystem(faults: [.fail(atStep: step, with: .ioError, writtenPrefix: 100)])
        let error = try #require(throws: StoreError.self) {
            try ChangeLogStore.snapshot(ofStoreAt: source, to: directory.file("second.sqlite"), fileSystem: failing)
        }
        #expect(error.code == .database)
        #expect((error.cause as? FileSystemError)?.code == .ioError, "\(error)")
        #expect(try files("second").isEmpty, "nothing of the failed copy is left")
        #expect(try files("first") == first, "the previous snapshot is untouched")
        let copy = try ChangeLogStore(at: directory.file("first.sqlite"), device: device, clock: Fixtures.clock())
        #expect(try copy.changes(of: Fixtures.document).map(\.id.seq) == [1, 2, 3])
    }

    @Test func aSnapshotOntoAnotherIsRefusedAndLeavesItAsItWas() throws {
        let source = try storeWithLog()
        try ChangeLogStore.snapshot(ofStoreAt: source, to: directory.file("first.sqlite"))
        let first = try files("first")
        let recorder = FaultInjectingFileSystem()
        let error = try #require(throws: StoreError.self) {
            try ChangeLogStore.snapshot(ofStoreAt: source, to: directory.file("first.sqlite"), fileSystem: recorder)
        }
        #expect(error.code == .database)
        #expect(recorder.stepCount == 0)
        #expect(try files("first") == first)
    }

    @Test(arguments: [Durability.normal, .off])
    func aNewStoresImageIsWrittenWholeThroughTheFileSystem(durability: Durability) throws {
        let recorder = FaultInjectingFileSystem()
        let url = directory.file("new.sqlite")
        _ = try ChangeLogStore(at: url, key: DeviceKey.named("A"), durability: durability, fileSystem: recorder)
        let expected: [FaultInjectingFileSystem.Step.Kind] =
            durability == .off
            ? [.writeFile, .rename] : [.writeFile, .synchronizeFile, .rename, .synchronizeDirectory]
        #expect(recorder.steps.map(\.kind) == expected)
        #expect(recorder.steps.last { $0.kind == .rename }?.destination == url.path)
    }

    @Test(arguments: [0, 1, 2])
    func aNewStoreWhoseImageCannotBeWrittenThrowsAndLeavesNoFile(step: Int) throws {
        let failing = FaultInjectingFileSystem(faults: [.fail(atStep: step, with: .noSpace, writtenPrefix: 10)])
        let url = directory.file("new.sqlite")
        let error = try #require(throws: StoreError.self) {
            try ChangeLogStore(at: url, key: DeviceKey.named("A"), fileSystem: failing)
        }
        #expect((error.cause as? FileSystemError)?.code == .noSpace, "\(error)")
        #expect(try files("new").isEmpty)
        // Nothing is in the way of the next attempt.
        _ = try ChangeLogStore(at: url, key: DeviceKey.named("A"))
    }

    @Test func anExistingStoresHeaderIsReadThroughTheFileSystem() throws {
        let url = directory.file("kept.sqlite")
        try ChangeLogStore(at: url, key: DeviceKey.named("A")).close()
        let before = try files("kept")
        let crashed = FaultInjectingFileSystem(faults: [.crash(atStep: 0)])
        #expect(throws: FileSystemError.self) { try crashed.createDirectory(at: directory.file("crash")) }
        let error = try #require(throws: StoreError.self) {
            try ChangeLogStore(at: url, key: DeviceKey.named("A"), fileSystem: crashed)
        }
        #expect(error.code == .database)
        #expect((error.cause as? FileSystemError)?.code == .crashed, "\(error)")
        #expect(try files("kept") == before, "the store was not touched")
    }

    @Test func aSnapshotReadsTheSourcesHeaderThroughTheFileSystem() throws {
        let source = try storeWithLog()
        let crashed = FaultInjectingFileSystem(faults: [.crash(atStep: 0)])
        #expect(throws: FileSystemError.self) { try crashed.createDirectory(at: directory.file("crash")) }
        let error = try #require(throws: StoreError.self) {
            try ChangeLogStore.snapshot(ofStoreAt: source, to: directory.file("copy.sqlite"), fileSystem: crashed)
        }
        #expect((error.cause as? FileSystemError)?.code == .crashed, "\(error)")
        #expect(try files("copy").isEmpty)
    }
}
