import FolioCore
@testable import FolioSimulator
import Foundation
import Testing

@Suite struct RunDirectoriesTests {
    let manager = FileManager.default

    func scratch() throws -> URL {
        let url = manager.temporaryDirectory.appendingPathComponent("folio-run-directories-\(UUID())", isDirectory: true)
        try manager.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func write(_ path: String, in root: URL) throws {
        let url = root.appendingPathComponent(path)
        try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: url)
    }

    func contents(of root: URL) -> [String] {
        (manager.enumerator(atPath: root.path)?.allObjects as? [String] ?? []).sorted()
    }

    @Test func emptyingKeepsTheLibrarySkeletonAndRemovesEverythingElse() throws {
        let root = try scratch()
        defer { try? manager.removeItem(at: root) }
        let run = root.appendingPathComponent("run")
        let outside = root.appendingPathComponent("outside")
        try write("device-1/.folio/store.sqlite", in: run)
        try write("device-1/.folio/store.sqlite-wal", in: run)
        try write("device-1/Documents/Notes.text", in: run)
        try write("device-1/Documents/Album.pages/images/a.png", in: run)
        try manager.createDirectory(at: run.appendingPathComponent("device-2/Shared"), withIntermediateDirectories: true)
        try write("stray.txt", in: run)
        try write("kept.txt", in: outside)
        try manager.createSymbolicLink(at: run.appendingPathComponent("device-1/link"), withDestinationURL: outside)

        #expect(RunDirectories.empty(run, keepingDirectoriesTo: RunDirectories.keptDepth))

        #expect(contents(of: run) == ["device-1", "device-1/.folio", "device-1/Documents", "device-2", "device-2/Shared"])
        #expect(contents(of: outside) == ["kept.txt"], "a link is removed, not followed")
    }

    @Test func emptyingAMissingDirectoryFails() throws {
        let root = try scratch()
        defer { try? manager.removeItem(at: root) }
        #expect(!RunDirectories.empty(root.appendingPathComponent("absent"), keepingDirectoriesTo: 2))
    }

    @Test func aSimulatorRunsInTheDirectoryItsLastRunEmptiedAndGetsTheSameResult() async throws {
        let root = try scratch()
        defer { try? manager.removeItem(at: root) }
        var scenario = try ScenarioParser.parse(yaml: """
            name: Reuse
            devices: [{name: iPad}, {name: Mac}]
            steps:
              - create: {device: iPad, document: Notes, text: "a"}
              - create: {device: iPad, document: Album, pages: {text: "Day 1", images: {cover.png: 64}}}
              - sync: all
              - edit: {device: Mac, document: Notes, append: "b"}
              - crash: {device: Mac}
              - restart: {device: Mac}
              - sync: all
              - expect: {document: Notes, device: iPad, text: "ab"}
            """, file: "reuse.yaml")
        scenario.seed = 7
        var simulator: Simulator? = Simulator(workDirectory: root)
        let first = await simulator!.run(scenario)
        let afterFirst = contents(of: root)
        let second = await simulator!.run(scenario)

        #expect(first.passed, "\(first.failures)")
        #expect(second.passed, "\(second.failures)")
        #expect(first.steps.map(\.events) == second.steps.map(\.events))
        #expect(afterFirst.count == 1 + 2 * 4, "the run's directory, two devices and their three directories: \(afterFirst)")
        #expect(contents(of: root) == afterFirst, "the second run used the first one's directory")
        simulator = nil
        #expect(contents(of: root).isEmpty, "a released simulator removes its spare directories")
    }
}
