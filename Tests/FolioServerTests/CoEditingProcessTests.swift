import Folio
import FolioCore
import FolioModels
import FolioStore
import FolioTesting
import FolioToolRunner
import Foundation
import Synchronization
import Testing

/// People type together into one note, each in a device process of their own (the CoEditing example), through a real
/// `folio serve`: every device ends with the same text, every keystroke in it, in each person's order, every other
/// person's cursor after the last character they typed, and the log holds their keystrokes and nothing settling them.
@Suite struct CoEditingProcessTests {
    @Test func threeDeviceProcessesTypeTogetherAndAgree() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let url = fixture.server.libraryURL("notes").absoluteString
        let people = [("Ann", "the budget is approved"), ("Bob", "hire two people"), ("Cy", "ship in May")]
        var processes: [ToolProcess] = []
        defer { for process in processes where process.isRunning { process.send(SIGKILL) } }
        for (index, (name, text)) in people.enumerated() {
            let joined = Mutex(false)
            let process = try ToolProcess.start(
                [try fixture.directory.subdirectory(name).path, url, token, name, text, "\(people.count)"],
                executable: try Self.example()
            ) { line in if line == "\(name) joined" { joined.withLock { $0 = true } } }
            processes.append(process)
            // The first makes the note; the others find it on the server.
            if index == 0 {
                try await eventually(within: .seconds(30), "the first device joined") { joined.withLock { $0 } }
            }
        }
        // A device that never sees every line finished is stopped, and the test fails on what it printed.
        let running = processes
        let watchdog = Task {
            try await Task.sleep(for: .seconds(90))
            for process in running where process.isRunning { process.send(SIGKILL) }
        }
        defer { watchdog.cancel() }
        var texts: [String] = []
        for (process, (name, _)) in zip(processes, people) {
            let run = await process.finish()
            #expect(run.status == 0, "\(name) printed \(run.output) \(run.errors)")
            // What follows "NAME joined": the note as the device shows it at the end, then the others' cursors.
            let printed = run.output.split(separator: "\n").drop { $0 != "\(name) joined" }.dropFirst()
            texts.append(printed.prefix { $0 != "cursors:" }.joined(separator: "\n"))
            let cursors = printed.drop { $0 != "cursors:" }.dropFirst().map(String.init)
            let expected = people.filter { $0.0 != name }.map { other, typed in
                "  \(other) after “\(String(String.UnicodeScalarView((typed + " ✓").unicodeScalars.suffix(8))))”"
            }
            #expect(cursors == expected, "\(name) shows the others' cursors elsewhere: \(run.output)")
        }
        #expect(Set(texts).count == 1, "the devices disagree: \(texts)")
        let lines = Set(texts[0].split(separator: "\n").map(String.init))
        #expect(lines == Set(people.map { "\($0.0): \($0.1) ✓" }), "\(texts[0])")

        // Each device's log: keystrokes, and no change settling anything.
        for (name, _) in people {
            let library = try DocumentLibrary(at: try fixture.directory.subdirectory(name), deviceName: name)
            let note = try #require(try await library.documents().first { $0.displayName == "Meeting notes" })
            let log = try library.store.changes(of: note.id, since: VersionVector())
            #expect(!log.contains { if case .resolution = $0.kind { true } else { false } }, "\(name)")
        }
    }

    /// The built CoEditingExample, next to the built `folio`.
    static func example() throws -> URL {
        let folio = try FolioExecutable.locate().get()
        return folio.deletingLastPathComponent().appendingPathComponent("CoEditingExample")
    }
}
