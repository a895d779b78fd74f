import FolioFiles
import FolioReports
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@testable import folio

/// The tool's own files (scenario files, reports, temporary copies of stores) go through the file system it is
/// given, and a failure there is the tool's usual error.
@Suite(.workPool) struct CommandFilesTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A fault injector that has crashed: every later call throws `crashed`.
    private func crashed() -> FaultInjectingFileSystem {
        let files = FaultInjectingFileSystem(faults: [.crash(atStep: 0)])
        _ = try? files.createDirectory(at: directory.file("crash"))
        return files
    }

    @Test func aScenarioFileThatCannotBeReadIsInvalidInputAndNothingRuns() throws {
        let file = directory.file("a.yaml")
        try PosixFileSystem().writeFile(Data("name: a\n".utf8), to: file)
        let error = try #require(throws: CommandFailure.self) {
            try ScenarioFiles.parse([file.path], fileSystem: crashed())
        }
        #expect(error.exitCode == 2)
        #expect(error.message == "\(file.path): cannot read the file\nnothing was run")
    }

    @Test func aScenarioFileNamedThroughASymbolicLinkIsRead() throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Scenarios/01-offline-edits-ask-user.yaml").standardized
        let link = directory.file("linked.yaml")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: source)
        let parsed = try ScenarioFiles.parse([link.path], fileSystem: PosixFileSystem())
        #expect(parsed.count == 1)
        #expect(parsed.first?.0 == link.path, "reported under the name the user gave")
    }

    @Test func aReportThatCannotBeWrittenIsInvalidInputAndLeavesNoFile() throws {
        let out = directory.url.appendingPathComponent("reports", isDirectory: true)
        let failing = FaultInjectingFileSystem(faults: [.fail(atStep: 1, with: .noSpace, writtenPrefix: 3)])
        let error = try #require(throws: CommandFailure.self) {
            try ReportOutput.write(
                ConflictReport(title: "a", kind: .library), as: .md, named: "a", into: out.path, fileSystem: failing)
        }
        #expect(failing.steps.first?.kind == .createDirectory, "the directory is made through it")
        #expect(error.exitCode == 2)
        #expect(error.message == "cannot write \(out.path)/a.md: no space left on device")
        #expect(try PosixFileSystem().contentsOfDirectory(at: out).isEmpty)
    }

    @Test func anInspectReportThatCannotBeWrittenIsInvalidInputAndLeavesNoFile() throws {
        let out = directory.file("report.md")
        let failing = FaultInjectingFileSystem(faults: [.fail(atStep: 0, with: .readOnly)])
        let error = try #require(throws: CommandFailure.self) {
            try ReportOutput.write("# Report\n", toFileAt: out.path, fileSystem: failing)
        }
        #expect(error.message == "cannot write \(out.path): read-only file system")
        #expect(try PosixFileSystem().itemKind(at: out) == .absent)
        #expect(try directory.fileNames().isEmpty, "no hidden file is left")
    }

    @Test func aStoreThatCannotBeCopiedIsACheckFailure() throws {
        let store = directory.file("A.sqlite")
        _ = try openStore(at: store.path, deviceNamed: "A")
        let error = try #require(throws: CommandFailure.self) { try StoreCopy(of: store.path, fileSystem: crashed()) }
        #expect(error.exitCode == 1)
        #expect(
            error.message.hasPrefix("cannot make a temporary copy of \(store.path): the device crashed"),
            "\(error.message)")
    }
}
