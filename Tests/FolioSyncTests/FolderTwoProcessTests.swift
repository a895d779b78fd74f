import FolioCore
import FolioStore
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// Two processes sync two stores through one folder at the same time, each appending between rounds: the folder
/// never shows a reader a half-written file, and both stores end with the same sound log.
@Suite struct FolderTwoProcessTests {
    @Test func twoProcessesAtOnceConverge() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "folio-two-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("Shared").path
        func arguments(_ device: String, rounds: Int, append: Int) -> [String] {
            [
                "log", "sync", "--store", directory.appendingPathComponent("\(device).sqlite").path, "--folder", folder,
                "--device", device, "--rounds", "\(rounds)", "--append", "\(append)",
            ]
        }
        async let first = ToolRun.folio(arguments("A", rounds: 30, append: 7))
        async let second = ToolRun.folio(arguments("B", rounds: 30, append: 5))
        let runs = try await [first, second]
        for run in runs { #expect(run.status == 0, "\(run.output)\(run.errors)") }
        #expect(!runs.contains { $0.output.contains("problem:") }, "\(runs.map(\.output))")
        // Settle: each reads what the other wrote last.
        for device in ["A", "B", "A"] {
            #expect(try await ToolRun.folio(arguments(device, rounds: 1, append: 0)).status == 0)
        }
        let document = DocumentID(UUIDBytes("00000000-0000-4000-8000-000000000001")!)
        var vectors: [VersionVector] = []
        for device in ["A", "B"] {
            let store = try ChangeLogStore(
                at: directory.appendingPathComponent("\(device).sqlite"),
                key: DeviceKey(using: SeededIdentifierSource(seed: 99)), deviceName: "checker")
            try store.checkInvariants()
            vectors.append(try store.vector(of: document))
            try store.close()
        }
        #expect(vectors[0] == vectors[1])
        #expect(vectors[0].changeCount == 30 * 7 + 30 * 5)
    }
}
