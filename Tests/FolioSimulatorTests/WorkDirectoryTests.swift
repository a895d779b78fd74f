import FolioFiles
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@testable import folio

/// `--work-dir` is made through the file system it is given.
@Suite(.workPool) struct WorkDirectoryTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    @Test func theDirectoryAndItsParentsAreMadeThroughTheFileSystem() throws {
        let recorder = FaultInjectingFileSystem()
        let work = directory.url.appendingPathComponent("made/for/runs", isDirectory: true)
        let url = try WorkDirectory.prepare(work.path, fileSystem: recorder)
        #expect(url.path == work.path)
        #expect(recorder.steps.map(\.kind) == [.createDirectory, .createDirectory, .createDirectory])
        #expect(try PosixFileSystem().itemKind(at: work) == .directory)
    }

    @Test func aDirectoryThatCannotBeMadeIsInvalidInputNamingWhy() throws {
        let failing = FaultInjectingFileSystem(faults: [.fail(atStep: 0, with: .permissionDenied)])
        let work = directory.url.appendingPathComponent("denied", isDirectory: true)
        let error = try #require(throws: CommandFailure.self) {
            try WorkDirectory.prepare(work.path, fileSystem: failing)
        }
        #expect(error.exitCode == 2)
        #expect(
            error.message
                == "--work-dir \(work.path) cannot be made (\(work.path): permission denied); name a directory you can write to"
        )
        #expect(try PosixFileSystem().itemKind(at: work) == .absent)
    }
}
