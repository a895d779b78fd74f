import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioToolRunner
import Foundation
import Testing

/// `folio log history` and `folio log show --document --at`: a document's versions listed from a store file, and
/// its contents printed at one of them, by number, hash or time; bad references refused with exit 2.
@Suite struct LogHistoryCommandTests {
    static let start = Timestamp(millisecondsSince1970: 1_767_225_600_000)  // 2026-01-01T00:00:00Z

    /// A library whose text document "Notes" was saved as "one" at the start, as "one two" 20 minutes later, and
    /// named "Draft" then; returns its store file.
    func makeStore(in directory: URL) async throws -> URL {
        let clock = ManualClock(start: Self.start)
        let library = try DocumentLibrary(
            at: directory, key: DeviceKey(using: SeededIdentifierSource(seed: 5)), deviceName: "Mac", clock: clock,
            identifiers: SeededIdentifierSource(seed: 6), backgroundWork: false)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("one"))
        try await document.save()
        clock.advance(byMilliseconds: 20 * 60_000)
        try await document.edit(.append(" two"))
        try await document.save()
        try await document.markVersion("Draft")
        try await document.close()
        try library.store.close()
        return directory.appendingPathComponent(".folio/store.sqlite")
    }

    @Test func historyListsTheVersionsAndShowPrintsOne() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("folio-history-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        let store = try await makeStore(in: work)
        let bytes = try Data(contentsOf: store)

        let history = try await ToolRun.folio(["log", "history", store.path, "--document", "Notes"])
        #expect(history.status == 0, "\(history.errors)")
        let lines = history.output.split(separator: "\n").map(String.init)
        // The save at 00:20 and the name given to that state are one version, listed as the named one.
        #expect(lines.count == 2, "\(history.output)")
        #expect(lines.first?.hasPrefix("1  2026-01-01T00:00:00.000Z  saved  2 changes by Mac  ") == true, "\(lines)")
        #expect(lines.last?.hasPrefix("2  2026-01-01T00:20:00.000Z  named \"Draft\"  2 changes by Mac  ") == true)

        for (reference, text) in [("1", "one"), ("2", "one two"), ("2026-01-01T00:10:00Z", "one")] {
            let show = try await ToolRun.folio(["log", "show", store.path, "--document", "Notes", "--at", reference])
            #expect(show.status == 0, "\(reference): \(show.errors)")
            #expect(show.output == text + "\n", "\(reference)")
        }
        let hash = String(lines[0].split(separator: " ").last!)
        let byHash = try await ToolRun.folio(["log", "show", store.path, "--document", "Notes", "--at", hash])
        #expect(byHash.output == "one\n", "\(byHash.errors)")
        #expect(try Data(contentsOf: store) == bytes, "the store is only read")
    }

    @Test func badReferencesAndNamesAreRefusedWithExitTwo() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("folio-history-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        let store = try await makeStore(in: work)
        for (arguments, message) in [
            (["history", store.path, "--document", "Nope"], "has no document named \"Nope\""),
            (["show", store.path, "--document", "Notes", "--at", "9"], "there is no version 9"),
            (["show", store.path, "--document", "Notes", "--at", "2025-01-01T00:00:00Z"], "no version at or before"),
            (["show", store.path, "--document", "Notes", "--at", "zz"], "is not a version number"),
        ] {
            let run = try await ToolRun.folio(["log"] + arguments)
            #expect(run.status == 2, "\(arguments): \(run.errors)")
            #expect(run.errors.contains(message), "\(arguments): \(run.errors)")
        }
        let unpaired = try await ToolRun.folio(["log", "show", store.path, "--at", "1"])
        #expect(unpaired.status != 0)
        #expect(unpaired.errors.contains("--document and --at go together"), "\(unpaired.errors)")
    }
}
