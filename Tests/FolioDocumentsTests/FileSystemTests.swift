import FolioDocuments
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real file system's calls and errors, and the fault injector's counting, crashes and failures.
@Suite(.workPool) struct FileSystemTests {
    let directory: TemporaryDirectory
    let fileSystem = PosixFileSystem()

    init() throws {
        directory = try TemporaryDirectory()
    }

    @Test func writesReadsRenamesAndRemoves() throws {
        let a = directory.file("a.txt")
        try fileSystem.writeFile(Data("hello".utf8), to: a)
        try fileSystem.synchronizeFile(at: a)
        try fileSystem.synchronizeDirectory(at: directory.url)
        #expect(try fileSystem.contents(of: a) == Data("hello".utf8))
        #expect(try fileSystem.attributes(at: a).size == 5)
        #expect(try fileSystem.attributes(at: a).kind == .file)

        // Truncates on rewrite.
        try fileSystem.writeFile(Data("hi".utf8), to: a)
        #expect(try fileSystem.contents(of: a) == Data("hi".utf8))

        let b = directory.file("b.txt")
        try fileSystem.writeFile(Data("old".utf8), to: b)
        try fileSystem.rename(a, to: b)
        #expect(try fileSystem.itemKind(at: a) == .absent)
        #expect(try fileSystem.contents(of: b) == Data("hi".utf8))

        try fileSystem.remove(at: b)
        #expect(try fileSystem.itemKind(at: b) == .absent)
        let error = try #require(throws: FileSystemError.self) { try fileSystem.remove(at: b) }
        #expect(error.code == .notFound)
    }

    @Test func aFileSystemThatDoesNotSynchronizeMakesNoCallForIt() throws {
        let missing = directory.file("missing")
        #expect(throws: FileSystemError.self) { try fileSystem.synchronizeFile(at: missing) }
        let unsynchronized = PosixFileSystem(synchronizes: false)
        #expect(!unsynchronized.synchronizes)
        try unsynchronized.synchronizeFile(at: missing)
        try unsynchronized.synchronizeDirectory(at: missing)
        let a = directory.file("a.txt")
        try unsynchronized.writeFile(Data("kept".utf8), to: a)
        #expect(try fileSystem.contents(of: a) == Data("kept".utf8))
    }

    @Test func readsAnEmptyAndALargeFile() throws {
        let empty = directory.file("empty")
        try fileSystem.writeFile(Data(), to: empty)
        #expect(try fileSystem.contents(of: empty).isEmpty)
        let large = directory.file("large")
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try fileSystem.writeFile(bytes, to: large)
        #expect(try fileSystem.contents(of: large) == bytes)
    }

    @Test func listsDirectoriesSortedByBytes() throws {
        for name in ["b", "a", "B", "é", "a.txt", ".hidden"] {
            try fileSystem.writeFile(Data(), to: directory.file(name))
        }
        try fileSystem.createDirectory(at: directory.file("dir"))
        #expect(
            try fileSystem.contentsOfDirectory(at: directory.url) == [".hidden", "B", "a", "a.txt", "b", "dir", "é"])
        let error = try #require(throws: FileSystemError.self) {
            try fileSystem.contentsOfDirectory(at: directory.file("a"))
        }
        #expect(error.code == .notDirectory)
    }

    @Test func reportsKindsWithoutFollowingLinks() throws {
        let file = directory.file("file")
        try fileSystem.writeFile(Data("x".utf8), to: file)
        let link = directory.file("link")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: directory.url.path)
        let fifo = directory.file("fifo")
        #expect(mkfifo(fifo.path, 0o644) == 0)

        #expect(try fileSystem.itemKind(at: file) == .file)
        #expect(try fileSystem.itemKind(at: directory.url) == .directory)
        #expect(try fileSystem.itemKind(at: link) == .symbolicLink)
        #expect(try fileSystem.itemKind(at: fifo) == .other)
        #expect(try fileSystem.itemKind(at: directory.file("absent")) == .absent)
        #expect(try fileSystem.itemKind(at: file.appendingPathComponent("below")) == .absent)
        // A trailing slash must not make lstat follow the link.
        #expect(try fileSystem.itemKind(at: URL(fileURLWithPath: link.path + "/")) == .symbolicLink)
        #expect(try fileSystem.attributes(at: link).kind == .symbolicLink)
    }

    @Test func refusesToReadOrWriteThroughLinksAndSpecialFiles() throws {
        let target = directory.file("target")
        try fileSystem.writeFile(Data("secret".utf8), to: target)
        let link = directory.file("link")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target.path)
        let fifo = directory.file("fifo")
        #expect(mkfifo(fifo.path, 0o644) == 0)

        #expect(try #require(throws: FileSystemError.self) { try fileSystem.contents(of: link) }.code == .symbolicLink)
        #expect(
            try #require(throws: FileSystemError.self) { try fileSystem.writeFile(Data("x".utf8), to: link) }.code
                == .symbolicLink)
        #expect(try Disk.contents(target) == Data("secret".utf8))
        // Opening a FIFO for reading would block; it is refused instead.
        #expect(
            try #require(throws: FileSystemError.self) { try fileSystem.contents(of: fifo) }.code == .notRegularFile)
        #expect(
            try #require(throws: FileSystemError.self) { try fileSystem.contents(of: directory.url) }.code
                == .notRegularFile)
    }

    @Test func removesATreeWithoutFollowingALinkInside() throws {
        let outside = try directory.subdirectory("outside")
        try Disk.write("keep", to: outside.appendingPathComponent("keep.txt"))
        let tree = try directory.subdirectory("tree")
        try Disk.write("x", to: tree.appendingPathComponent("a/b/c.txt"))
        try FileManager.default.createSymbolicLink(
            atPath: tree.appendingPathComponent("a/escape").path,
            withDestinationPath: outside.path)
        try fileSystem.remove(at: tree)
        #expect(!Disk.exists(tree))
        #expect(Disk.names(in: outside) == ["keep.txt"])
    }

    @Test func translatesErrnoIntoCodesAndMessages() throws {
        let missing = directory.file("missing/child")
        let error = try #require(throws: FileSystemError.self) { try fileSystem.writeFile(Data(), to: missing) }
        #expect(error.code == .notFound)
        #expect(error.path == missing.path)
        #expect(error.message == "open for writing of '\(missing.path)' failed: no such file or directory")

        try fileSystem.createDirectory(at: directory.file("d"))
        #expect(
            try #require(throws: FileSystemError.self) { try fileSystem.createDirectory(at: directory.file("d")) }.code
                == .exists)

        #expect(FileSystemErrorCode(errorNumber: ENOSPC) == .noSpace)
        #expect(FileSystemErrorCode(errorNumber: EDQUOT) == .noSpace)
        #expect(FileSystemErrorCode(errorNumber: EACCES) == .permissionDenied)
        #expect(FileSystemErrorCode(errorNumber: EROFS) == .readOnly)
        #expect(FileSystemErrorCode(errorNumber: EIO) == .ioError)
        #expect(FileSystemErrorCode(errorNumber: EXDEV) == .other(EXDEV))
        #expect(FileSystemErrorCode.other(EXDEV).description == "other(\(EXDEV))")
    }

    @Test func aBoundedReadRefusesAFileBeyondItsLimit() throws {
        let a = directory.file("a")
        try fileSystem.writeFile(Data("0123456789".utf8), to: a)
        #expect(try fileSystem.contents(of: a, limit: 10) == Data("0123456789".utf8))
        let error = try #require(throws: FileSystemError.self) { try fileSystem.contents(of: a, limit: 9) }
        #expect(error.code == .tooLarge)
        let link = directory.file("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: a)
        #expect(
            try #require(throws: FileSystemError.self) { try fileSystem.contents(of: link, limit: 100) }.code
                == .symbolicLink)
    }

    @Test func copiesAFileWithoutFollowingLinks() throws {
        let a = directory.file("a")
        let b = directory.file("b")
        let large = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try fileSystem.writeFile(large, to: a)
        try fileSystem.writeFile(Data("old and longer".utf8), to: b)
        try fileSystem.copyFile(at: a, to: b)
        #expect(try fileSystem.contents(of: b) == large)

        let link = directory.file("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: a)
        #expect(
            try #require(throws: FileSystemError.self) { try fileSystem.copyFile(at: link, to: directory.file("c")) }
                .code == .symbolicLink)
        #expect(
            try #require(throws: FileSystemError.self) { try fileSystem.copyFile(at: b, to: link) }.code
                == .symbolicLink)
        #expect(try fileSystem.contents(of: a) == large)
        #expect(
            try #require(throws: FileSystemError.self) {
                try fileSystem.copyFile(at: directory.url, to: directory.file("d"))
            }.code == .notRegularFile)
    }

    @Test func aLinkNeverReplacesWhatIsThere() throws {
        let a = directory.file("a")
        let b = directory.file("b")
        let taken = directory.file("taken")
        try fileSystem.writeFile(Data("new".utf8), to: a)
        try fileSystem.writeFile(Data("kept".utf8), to: taken)
        try fileSystem.link(a, to: b)
        #expect(try fileSystem.contents(of: b) == Data("new".utf8))
        #expect(try fileSystem.attributes(at: a).fileNumber == fileSystem.attributes(at: b).fileNumber)
        let error = try #require(throws: FileSystemError.self) { try fileSystem.link(a, to: taken) }
        #expect(error.code == .exists)
        #expect(try fileSystem.contents(of: taken) == Data("kept".utf8))
    }

    @Test func aFileKeepsItsNumberAcrossARenameAndANewFileGetsAnother() throws {
        let a = directory.file("a")
        let b = directory.file("b")
        try fileSystem.writeFile(Data("x".utf8), to: a)
        let number = try fileSystem.attributes(at: a).fileNumber
        #expect(number != 0)
        try fileSystem.rename(a, to: b)
        #expect(try fileSystem.attributes(at: b).fileNumber == number)
        try fileSystem.writeFile(Data("y".utf8), to: a)
        #expect(try fileSystem.attributes(at: a).fileNumber != number)
    }

    @Test func createsMissingDirectoriesAndNamesAFileInTheWay() throws {
        let deep = directory.url.appendingPathComponent("a/b/c", isDirectory: true)
        try fileSystem.createDirectories(at: deep)
        try fileSystem.createDirectories(at: deep)
        #expect(try fileSystem.itemKind(at: deep) == .directory)

        try fileSystem.writeFile(Data(), to: directory.file("file"))
        let below = directory.url.appendingPathComponent("file/x/y", isDirectory: true)
        let error = try #require(throws: FileSystemError.self) { try fileSystem.createDirectories(at: below) }
        #expect(error.code == .notDirectory)
        #expect(error.path == directory.file("file").path)
    }

    // MARK: - Fault injection

    @Test func countsCopiesAndLinksAsSteps() throws {
        let injector = FaultInjectingFileSystem(wrapping: fileSystem, faults: [.fail(atStep: 2, with: .noSpace)])
        let a = directory.file("a")
        try injector.writeFile(Data("12345".utf8), to: a)
        try injector.copyFile(at: a, to: directory.file("b"))
        #expect(
            try #require(throws: FileSystemError.self) { try injector.link(a, to: directory.file("c")) }.code
                == .noSpace)
        #expect(try fileSystem.itemKind(at: directory.file("c")) == .absent)
        try injector.link(a, to: directory.file("c"))
        #expect(injector.steps.map(\.kind) == [.writeFile, .copyFile, .link])
        #expect(injector.bytesWritten == 10)
        #expect(try #require(throws: FileSystemError.self) { try injector.contents(of: a, limit: 4) }.code == .tooLarge)
    }

    @Test func recordsStepsAndBytes() throws {
        let injector = FaultInjectingFileSystem(wrapping: fileSystem)
        let a = directory.file("a")
        try injector.createDirectory(at: directory.file("d"))
        try injector.writeFile(Data("12345".utf8), to: a)
        try injector.synchronizeFile(at: a)
        try injector.rename(a, to: directory.file("b"))
        _ = try injector.contents(of: directory.file("b"))
        try injector.remove(at: directory.file("b"))
        #expect(injector.steps.map(\.kind) == [.createDirectory, .writeFile, .synchronizeFile, .rename, .remove])
        #expect(injector.steps[1].description == "writeFile \(a.path) (5 bytes)")
        #expect(injector.steps[3].destination == directory.file("b").path)
        #expect(injector.stepCount == 5)
        #expect(injector.bytesWritten == 5)
        injector.resetRecord()
        #expect(injector.steps.isEmpty && injector.bytesWritten == 0 && injector.stepCount == 5)
    }

    @Test func aCrashStopsTheStepAndEverythingAfter() throws {
        let injector = FaultInjectingFileSystem(wrapping: fileSystem, faults: [.crash(atStep: 1)])
        let a = directory.file("a")
        try injector.writeFile(Data("first".utf8), to: a)
        let crash = try #require(throws: FileSystemError.self) { try injector.rename(a, to: directory.file("b")) }
        #expect(crash.code == .crashed)
        #expect(injector.hasCrashed)
        #expect(try fileSystem.itemKind(at: directory.file("b")) == .absent)
        #expect(try #require(throws: FileSystemError.self) { try injector.contents(of: a) }.code == .crashed)
        #expect(try #require(throws: FileSystemError.self) { try injector.itemKind(at: a) }.code == .crashed)
        #expect(try #require(throws: FileSystemError.self) { try injector.remove(at: a) }.code == .crashed)
        #expect(injector.steps.map(\.kind) == [.writeFile])
    }

    @Test(arguments: [0, 3, 9, 100])
    func aTornWriteLeavesAPrefix(prefix: Int) throws {
        let injector = FaultInjectingFileSystem(
            wrapping: fileSystem, faults: [.crash(atStep: 0, writtenPrefix: prefix)])
        let a = directory.file("a")
        #expect(throws: FileSystemError.self) { try injector.writeFile(Data("0123456789".utf8), to: a) }
        #expect(try Disk.contents(a) == Data("0123456789".utf8.prefix(prefix)))
        #expect(injector.bytesWritten == min(prefix, 10))
    }

    @Test func aFailureFailsOneStepAndLaterStepsWork() throws {
        let injector = FaultInjectingFileSystem(wrapping: fileSystem, faults: [.fail(atStep: 1, with: .ioError)])
        let a = directory.file("a")
        try injector.writeFile(Data("x".utf8), to: a)
        let error = try #require(throws: FileSystemError.self) { try injector.synchronizeFile(at: a) }
        #expect(error.code == .ioError)
        #expect(error.message == "fsync of '\(a.path)' failed: I/O error")
        #expect(!injector.hasCrashed)
        try injector.synchronizeFile(at: a)
        #expect(injector.steps.map(\.kind) == [.writeFile, .synchronizeFile])
        #expect(injector.stepCount == 3)
    }

    @Test func isSafeToUseFromSeveralThreads() async throws {
        let injector = FaultInjectingFileSystem(wrapping: fileSystem)
        let root = directory.url
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    for round in 0..<5 {
                        try? injector.writeFile(Data(count: 10), to: root.appendingPathComponent("f\(index)-\(round)"))
                    }
                }
            }
        }
        #expect(injector.stepCount == 40)
        #expect(injector.bytesWritten == 400)
    }
}
