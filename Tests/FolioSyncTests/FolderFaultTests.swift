import FolioCore
import FolioFiles
import FolioStore
import FolioSync
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Faults injected into the shared folder's file calls: a step that fails or crashes surfaces as a typed error, no
/// batch is half there, and the next sync writes what was not written.
@Suite(.workPool) struct FolderFaultTests {
    let directory: TemporaryDirectory
    static let a = Device.named("A"), b = Device.named("B")

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Opens A's store in `directory` with three changes, and makes the folder's identity (without faults).
    private func prepare(in directory: TemporaryDirectory) throws -> (store: ChangeLogStore, root: URL) {
        let store = try directory.openStore(for: Self.a)
        try store.append((1...3).map { Fixtures.edit("a\($0)") }, to: Fixtures.document)
        let root = directory.file("Shared")
        _ = try FolderTransport(root: root).identity()
        return (store, root)
    }

    /// The number of the first (or last) step of `kind` in A's first sync, found by a dry run in a directory of its
    /// own.
    private func step(_ kind: FaultInjectingFileSystem.Step.Kind, last: Bool = false) throws -> Int {
        let scratch = try TemporaryDirectory()
        let (store, root) = try prepare(in: scratch)
        let dryRun = FaultInjectingFileSystem()
        _ = try FolderTransport(root: root, fileSystem: dryRun).sync(store)
        let index = last ? dryRun.steps.lastIndex { $0.kind == kind } : dryRun.steps.firstIndex { $0.kind == kind }
        return try #require(index, "no \(kind) step in \(dryRun.steps)")
    }

    /// The items under the folder, as relative paths, sorted.
    private func items(under root: URL) -> [String] {
        (FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? []).sorted()
    }

    @Test(arguments: [
        (FaultInjectingFileSystem.Step.Kind.writeFile, FileSystemErrorCode.noSpace),
        (.synchronizeFile, .ioError),
        (.link, .ioError),
        (.synchronizeDirectory, .ioError),
    ])
    func aFailedStepOfABatchIsATypedErrorAndTheNextSyncWritesTheBatch(
        kind: FaultInjectingFileSystem.Step.Kind, code: FileSystemErrorCode
    ) throws {
        // The directory's sync that publishes the batch is the sync's last step of its kind.
        let step = try step(kind, last: kind == .synchronizeDirectory)
        let (store, root) = try prepare(in: directory)
        let failing = FaultInjectingFileSystem(faults: [.fail(atStep: step, with: code, writtenPrefix: 7)])
        let error = try #require(throws: SyncError.self) {
            try FolderTransport(root: root, fileSystem: failing).sync(store)
        }
        #expect(error.code == .io)
        #expect((error.cause as? FileSystemError)?.code == code, "\(error)")
        // No temporary file is left; the batch is there only if the failure came after it was published.
        let left = items(under: root)
        #expect(!left.contains { $0.split(separator: "/").last!.hasPrefix(".tmp-") }, "\(left)")
        let batches = left.filter { $0.hasSuffix(".changes") }
        #expect(batches.isEmpty == (kind != .synchronizeDirectory), "\(left)")

        // The next sync (no fault) finishes the job, and another device reads all of it.
        let again = try FolderTransport(root: root).sync(store)
        #expect(again.isComplete, "\(again)")
        let storeB = try directory.openStore(for: Self.b)
        let received = try FolderTransport(root: root).sync(storeB)
        #expect(received.isComplete && received.changesApplied == 3, "\(received)")
        try Convergence.expectConverged([store, storeB])
    }

    @Test func aCrashWhileWritingABatchLeavesNoBatchForReaders() throws {
        let step = try step(.writeFile)
        let (store, root) = try prepare(in: directory)
        let crashing = FaultInjectingFileSystem(faults: [.crash(atStep: step, writtenPrefix: 5)])
        let error = try #require(throws: SyncError.self) {
            try FolderTransport(root: root, fileSystem: crashing).sync(store)
        }
        #expect((error.cause as? FileSystemError)?.code == .crashed, "\(error)")
        // The torn temporary file stays (the process died), under a name readers ignore.
        #expect(!items(under: root).contains { $0.hasSuffix(".changes") })
        let storeB = try directory.openStore(for: Self.b)
        let nothing = try FolderTransport(root: root).receive(into: storeB)
        #expect(nothing.isComplete && nothing.changesReceived == 0 && nothing.problems.isEmpty, "\(nothing)")

        // The restarted device writes the batch.
        #expect(try FolderTransport(root: root).sync(store).changesSent == 3)
        #expect(try FolderTransport(root: root).sync(storeB).changesApplied == 3)
    }
}
