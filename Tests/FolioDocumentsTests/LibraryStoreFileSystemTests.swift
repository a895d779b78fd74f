import FolioCore
import FolioDocuments
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A library's store is opened through the library's file system: its header check and its first image.
@Suite(.workPool) struct LibraryStoreFileSystemTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    @Test func theFirstStoreImageIsWrittenThroughTheLibrarysFileSystem() throws {
        let recorder = FaultInjectingFileSystem()
        let root = directory.url.appendingPathComponent("Library", isDirectory: true)
        _ = try DocumentLibrary(at: root, fileSystem: recorder, backgroundWork: false)
        let image = root.appendingPathComponent(".folio/store.sqlite").path
        #expect(recorder.steps.contains { $0.kind == .rename && $0.destination == image }, "\(recorder.steps)")
    }

    @Test func aFirstStoreImageThatCannotBeWrittenThrowsAndLeavesNothing() throws {
        let dryRun = FaultInjectingFileSystem()
        _ = try DocumentLibrary(
            at: directory.url.appendingPathComponent("Dry", isDirectory: true), fileSystem: dryRun,
            backgroundWork: false)
        let step = try #require(
            dryRun.steps.firstIndex { $0.kind == .writeFile && $0.path.hasSuffix("/.folio/store.sqlite.new") },
            "\(dryRun.steps)")

        let failing = FaultInjectingFileSystem(faults: [.fail(atStep: step, with: .noSpace, writtenPrefix: 10)])
        let root = directory.url.appendingPathComponent("Library", isDirectory: true)
        let error = try #require(throws: DocumentError.self) {
            try DocumentLibrary(at: root, fileSystem: failing, backgroundWork: false)
        }
        let storeError = try #require(error.cause as? StoreError, "\(error)")
        #expect((storeError.cause as? FileSystemError)?.code == .noSpace, "\(error)")
        #expect(try PosixFileSystem().contentsOfDirectory(at: root.appendingPathComponent(".folio")).isEmpty)
    }
}
