import FolioCore
import FolioFiles
import FolioSimulator
import FolioTesting
import Foundation
import Testing

/// A simulator's runs make every file call through the file system it is given: the run's directories, the
/// devices' libraries and the files another program writes.
@Suite struct SimulatorFileSystemTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    func scenario() throws -> Scenario {
        try ScenarioParser.parse(
            yaml: """
                name: Files
                strategy: askUser
                devices: [{name: iPad}]
                steps:
                  - create: {device: iPad, document: Notes, text: "a"}
                  - save: {device: iPad, document: Notes}
                  - writeFile: {device: iPad, document: Notes, text: "theirs"}
                  - import: {device: iPad, document: Imported, text: "Hello"}
                """, file: "files.yaml")
    }

    @Test func aRunsFilesGoThroughTheSimulatorsFileSystem() async throws {
        let recorder = FaultInjectingFileSystem(wrapping: PosixFileSystem(synchronizes: false))
        let result = await Simulator(workDirectory: directory.url, fileSystem: recorder).run(try scenario())
        #expect(result.passed, "\(result.failures)")
        let steps = recorder.steps
        let run = try #require(steps.first { $0.kind == .createDirectory }?.path)
        #expect(run.hasPrefix(directory.url.path + "/folio-run-"), "the run's directory is made through it")
        let written = steps.filter { $0.kind == .writeFile }.map(\.path)
        #expect(
            written.contains { $0.hasSuffix("/import") }, "the file to import, written by another program: \(written)")
        #expect(written.contains { $0.contains("/Shared/") }, "the devices' saves: \(written)")
        #expect(
            steps.contains { $0.kind == .remove && $0.path.hasPrefix(run) }, "the run's directory is emptied through it"
        )
    }

    @Test func aRunWhoseDirectoryCannotBeMadeFailsInSetup() async throws {
        let failing = FaultInjectingFileSystem(
            wrapping: PosixFileSystem(synchronizes: false), faults: [.fail(atStep: 0, with: .noSpace)])
        let result = await Simulator(workDirectory: directory.url, fileSystem: failing).run(try scenario())
        let failure = try #require(result.failures.first)
        #expect(failure.kind == .setup)
        #expect(failure.message.contains("cannot create the run's directory"), "\(failure.message)")
        #expect(failure.message.contains("no space left on device"), "\(failure.message)")
    }
}
