import FolioCore
import FolioDocuments
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Flat saves: the temporary file, the rename, the errors and their messages.
@Suite(.workPool) struct SavePipelineFlatTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    @Test func savesReplacesAndReads() throws {
        let pipeline = SavePipeline()
        let url = directory.file("Notes.txt")
        try pipeline.saveFlat(Data("first".utf8), to: url)
        #expect(try pipeline.readFlat(at: url) == Data("first".utf8))
        try pipeline.saveFlat(Data("second".utf8), to: url)
        #expect(try pipeline.readFlat(at: url) == Data("second".utf8))
        try pipeline.saveFlat(Data(), to: url)
        #expect(try pipeline.readFlat(at: url).isEmpty)
        #expect(Disk.names(in: directory.url) == ["Notes.txt"])
    }

    @Test func followsTheSafeSaveSteps() throws {
        let injector = FaultInjectingFileSystem()
        let url = directory.file("Notes.txt")
        try SavePipeline(fileSystem: injector).saveFlat(Data("abc".utf8), to: url)
        let temporary = directory.file(".Notes.txt.folio-tmp").path
        #expect(
            injector.steps == [
                .init(kind: .writeFile, path: temporary, destination: nil, byteCount: 3),
                .init(kind: .synchronizeFile, path: temporary, destination: nil, byteCount: 0),
                .init(kind: .rename, path: temporary, destination: url.path, byteCount: 0),
                .init(kind: .synchronizeDirectory, path: directory.url.path, destination: nil, byteCount: 0),
            ])
    }

    @Test func savesThroughTheDocumentContentsEntryPoint() throws {
        let pipeline = SavePipeline()
        let url = directory.file("Notes.txt")
        let report = try pipeline.save(.data(Data("abc".utf8)), to: url)
        #expect(report == SaveReport(bytesWritten: 3, filesWritten: 1, filesRemoved: 0))
        #expect(try pipeline.read(at: url, isPackage: false) == .data(Data("abc".utf8)))
    }

    @Test func aFailedFileSyncFailsTheSaveAndKeepsThePreviousFile() throws {
        let url = directory.file("Notes.txt")
        try SavePipeline().saveFlat(Data("old".utf8), to: url)
        let injector = FaultInjectingFileSystem(faults: [.fail(atStep: 1, with: .ioError)])
        let pipeline = SavePipeline(fileSystem: injector)
        let error = try #require(throws: SaveError.self) { try pipeline.saveFlat(Data("new".utf8), to: url) }
        #expect(error.code == .syncFailed)
        #expect(error.message == "could not save Notes.txt: fsync of the temporary file failed: I/O error")
        #expect(error.description == error.message)
        #expect((error.cause as? FileSystemError)?.code == .ioError)
        #expect(try Disk.contents(url) == Data("old".utf8))
        #expect(Disk.leftovers(in: directory.url).isEmpty)
        // The next save works.
        try pipeline.saveFlat(Data("new".utf8), to: url)
        #expect(try Disk.contents(url) == Data("new".utf8))
    }

    @Test func aFailedDirectorySyncFailsTheSave() throws {
        let url = directory.file("Notes.txt")
        let injector = FaultInjectingFileSystem(faults: [.fail(atStep: 3, with: .ioError)])
        let error = try #require(throws: SaveError.self) {
            try SavePipeline(fileSystem: injector).saveFlat(Data("new".utf8), to: url)
        }
        #expect(error.code == .syncFailed)
        #expect(error.message == "could not save Notes.txt: fsync of its directory failed: I/O error")
        #expect(Disk.leftovers(in: directory.url).isEmpty)
    }

    @Test(arguments: [
        (FileSystemErrorCode.noSpace, SaveErrorCode.noSpace, "no space left on device"),
        (.permissionDenied, .permissionDenied, "permission denied"),
        (.readOnly, .permissionDenied, "read-only file system"),
        (.ioError, .writeFailed, "I/O error"),
    ])
    func aFailedWriteGivesItsCode(injected: FileSystemErrorCode, expected: SaveErrorCode, reason: String) throws {
        let url = directory.file("Notes.txt")
        try SavePipeline().saveFlat(Data("old".utf8), to: url)
        // A full disk leaves part of the temporary file behind; the save removes it.
        let injector = FaultInjectingFileSystem(faults: [.fail(atStep: 0, with: injected, writtenPrefix: 2)])
        let error = try #require(throws: SaveError.self) {
            try SavePipeline(fileSystem: injector).saveFlat(Data("new contents".utf8), to: url)
        }
        #expect(error.code == expected)
        #expect(error.message == "could not save Notes.txt: writing the temporary file failed: \(reason)")
        #expect(try Disk.contents(url) == Data("old".utf8))
        #expect(Disk.leftovers(in: directory.url).isEmpty)
    }

    @Test func aFailedRenameGivesRenameFailed() throws {
        let url = directory.file("Notes.txt")
        let injector = FaultInjectingFileSystem(faults: [.fail(atStep: 2, with: .other(18))])
        let error = try #require(throws: SaveError.self) {
            try SavePipeline(fileSystem: injector).saveFlat(Data("new".utf8), to: url)
        }
        #expect(error.code == .renameFailed)
        #expect(!Disk.exists(url))
        #expect(Disk.leftovers(in: directory.url).isEmpty)
    }

    @Test func aMissingDirectoryFailsTheSave() throws {
        let url = directory.file("missing/Notes.txt")
        let error = try #require(throws: SaveError.self) { try SavePipeline().saveFlat(Data("x".utf8), to: url) }
        #expect(error.code == .writeFailed)
        #expect(
            error.message == "could not save Notes.txt: writing the temporary file failed: no such file or directory")
    }

    @Test func readingRemovesALeftoverAndReportsAMissingFile() throws {
        let url = directory.file("Notes.txt")
        try Disk.write("old", to: url)
        try Disk.write("torn", to: directory.file(".Notes.txt.folio-tmp"))
        #expect(try SavePipeline().readFlat(at: url) == Data("old".utf8))
        #expect(Disk.names(in: directory.url) == ["Notes.txt"])

        let error = try #require(throws: SaveError.self) {
            try SavePipeline().readFlat(at: directory.file("absent.txt"))
        }
        #expect(error.code == .notFound)
    }

    @Test func aLongNameGetsAShortTemporaryName() throws {
        let name = String(repeating: "n", count: 240) + ".txt"
        let injector = FaultInjectingFileSystem()
        try SavePipeline(fileSystem: injector).saveFlat(Data("x".utf8), to: directory.file(name))
        let temporary = try #require(injector.steps.first).path
        #expect(URL(fileURLWithPath: temporary).lastPathComponent.hasPrefix(".folio-tmp-"))
        #expect(Disk.names(in: directory.url) == [name])
    }

    @Test func anErrorOfAnotherKindFromACustomFileSystemTakesTheStepsCodeAndIsKeptAsTheCause() throws {
        let url = directory.file("Notes.txt")
        let pipeline = SavePipeline(fileSystem: ForeignErrorFileSystem())
        let error = try #require(throws: SaveError.self) { try pipeline.saveFlat(Data("new".utf8), to: url) }
        #expect(error.code == .writeFailed)
        #expect(error.message == "could not save Notes.txt: writing the temporary file failed: \(ForeignError())")
        #expect(error.cause is ForeignError)
        #expect(Disk.leftovers(in: directory.url).isEmpty)
    }
}

/// What a custom file system might throw besides ``FileSystemError``.
private struct ForeignError: Error, CustomStringConvertible {
    var description: String { "the remote volume went away" }
}

/// A file system whose writes throw an error that is not a ``FileSystemError``.
private struct ForeignErrorFileSystem: FileSystem {
    let base = PosixFileSystem()
    func itemKind(at url: URL) throws -> FileItemKind { try base.itemKind(at: url) }
    func attributes(at url: URL) throws -> FileAttributes { try base.attributes(at: url) }
    func contents(of url: URL) throws -> Data { try base.contents(of: url) }
    func contentsOfDirectory(at url: URL) throws -> [String] { try base.contentsOfDirectory(at: url) }
    func createDirectory(at url: URL) throws { try base.createDirectory(at: url) }
    func writeFile(_ data: Data, to url: URL) throws { throw ForeignError() }
    func synchronizeFile(at url: URL) throws { try base.synchronizeFile(at: url) }
    func synchronizeDirectory(at url: URL) throws { try base.synchronizeDirectory(at: url) }
    func rename(_ source: URL, to destination: URL) throws { try base.rename(source, to: destination) }
    func remove(at url: URL) throws { try base.remove(at: url) }
}
