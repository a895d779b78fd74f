import FolioCore
import FolioTestWorkPool
import Foundation
import Testing

@testable import FolioSimulator

@Suite(.workPool) struct RunDirectoriesTests {
    let manager = FileManager.default

    func scratch() throws -> URL {
        let url = manager.temporaryDirectory.appendingPathComponent(
            "folio-run-directories-\(UUID())", isDirectory: true)
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
        try manager.createDirectory(
            at: run.appendingPathComponent("device-2/Shared"), withIntermediateDirectories: true)
        try write("stray.txt", in: run)
        try write("kept.txt", in: outside)
        try manager.createSymbolicLink(at: run.appendingPathComponent("device-1/link"), withDestinationURL: outside)

        #expect(RunDirectories.empty(run, keepingDirectoriesTo: RunDirectories.keptDepth))

        #expect(
            contents(of: run) == ["device-1", "device-1/.folio", "device-1/Documents", "device-2", "device-2/Shared"])
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
        var scenario = try ScenarioParser.parse(
            yaml: """
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
        #expect(
            afterFirst.count == 1 + 2 * 4, "the run's directory, two devices and their three directories: \(afterFirst)"
        )
        #expect(contents(of: root) == afterFirst, "the second run used the first one's directory")
        simulator = nil
        #expect(contents(of: root).isEmpty, "a released simulator removes its spare directories")
    }

    /// A device's name is the scenario's text: the files a run makes for a device (its library, a file another
    /// program writes for an import) are named by the device's place in the scenario and, when kept, by its name
    /// reduced to letters, digits, `-`, `_` and `.`, so no name leads to another path.
    @Test(arguments: ["x/../../../escaped", "../../escaped", "/tmp/escaped", "..", "a/b"])
    func aDeviceNameNeverReachesAPath(name: String) async throws {
        let root = try scratch()
        defer { try? manager.removeItem(at: root) }
        let work = root.appendingPathComponent("work", isDirectory: true)
        try manager.createDirectory(at: work, withIntermediateDirectories: true)
        let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\\\"") + "\""
        let scenario = try ScenarioParser.parse(
            yaml: """
                name: Hostile device names
                devices: [{name: \(quoted)}, {name: Mac}]
                steps:
                  - import: {device: \(quoted), document: Notes, text: "hello"}
                  - import: {device: \(quoted), document: Album, model: pages, pages: {text: "t", images: {a.png: 4}}}
                  - sync: all
                  - expect: {document: Notes, device: Mac, text: "hello"}
                """, file: "hostile.yaml")
        let result = await Simulator(workDirectory: work, keepsFiles: true).run(scenario)
        #expect(result.passed, "\(result.failures)")
        #expect(
            try manager.contentsOfDirectory(atPath: root.path) == ["work"],
            "nothing was written beside the work directory")
        let run = try #require(try manager.contentsOfDirectory(atPath: work.path).first)
        #expect(try manager.contentsOfDirectory(atPath: work.path) == [run], "one run directory")
        #expect(!manager.fileExists(atPath: "/tmp/escaped-2"))
        let names = try manager.contentsOfDirectory(atPath: work.appendingPathComponent(run).path).sorted()
        #expect(names.allSatisfy { $0.hasPrefix("device-") || $0.hasPrefix("outside-device-") }, "\(names)")
        #expect(names.allSatisfy { !$0.contains("/") }, "\(names)")
        let kept = work.appendingPathComponent(run, isDirectory: true)
        #expect(result.deviceDirectories["Mac"] == kept.appendingPathComponent("device-2-Mac", isDirectory: true))
        let hostile = try #require(result.deviceDirectories[name])
        #expect(hostile.deletingLastPathComponent() == kept, "\(hostile.path)")
        #expect(hostile.lastPathComponent.hasPrefix("device-1-"), "\(hostile.path)")
    }

    @Test(arguments: [
        ("iPad", "device-1-iPad"), ("Anne's Mac", "device-1-Anne_s_Mac"), ("日本", "device-1-日本"),
        ("../x", "device-1-.._x"), ("Eve\u{1B}]0;\u{202E}", "device-1-Eve__0__"),
        (String(repeating: "a", count: 100), "device-1-" + String(repeating: "a", count: 40)),
    ])
    func aKeptDevicesDirectoryIsNamedAfterIt(name: String, directory: String) {
        #expect(ScenarioRun.directoryName(ofDevice: name, at: 1, named: true) == directory)
        #expect(ScenarioRun.directoryName(ofDevice: name, at: 1, named: false) == "device-1")
    }
}
