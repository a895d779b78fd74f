import FolioConflicts
import FolioCore
import FolioModels
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@testable import FolioDocuments

/// The compact encoding of runs of changes rebuilds every change of the editing traces exactly, hash for hash, whole
/// or cut into runs that name the runs before them.
@Suite(.workPool) struct ChangeRunTraceTests {
    /// The concurrent trace as it is; the sequential ones (one person typing) with 20 patches a change, so that a
    /// debug build records them in seconds.
    @Test(arguments: ["friendsforever.json.gz", "automerge-paper.json.gz", "seph-blog1.json.gz"])
    func aTraceRoundTripsWholeAndInRuns(_ name: String) async throws {
        let url = CharacterMergeTests.traces.appendingPathComponent(name)
        let trace =
            name == "friendsforever.json.gz"
            ? try ConcurrentEditingTrace.load(url)
            : try ConcurrentEditingTrace.loadSequential(url, patchesPerTransaction: 20)
        let fixture = try LibraryFixture(seed: 38)
        let library = try DocumentLibrary(
            at: fixture.root, key: fixture.key, deviceName: "bench", clock: fixture.clock,
            identifiers: fixture.identifiers, autosave: .manual, conflictPolicy: ConflictPolicy(default: .merge),
            backgroundWork: false)
        let created = try await library.create(TextDocument.self, named: "trace")
        let id = created.id
        let root = try #require(try library.store.heads(of: id).first).hash
        try await created.close()
        let authors = (0..<trace.agentCount).map { DeviceKey.named("agent \($0)").device(named: "agent \($0)") }
            .sorted { $0.id < $1.id }
        _ = try trace.record(in: library.store, document: id, root: root, authors: authors)
        let changes = try library.store.changes(of: id)

        let whole = try ChangeRunCodec.encode(changes, of: id) { _ in nil }
        let decoded = try ChangeRunCodec.decode(whole, document: id) { _ in nil }
        try Self.expectSame(decoded, changes)
        let canonical = changes.reduce(0) { $0 + $1.encoded().count }
        print("\(name): \(changes.count) changes, \(canonical) canonical bytes, \(whole.count) in one run")

        var stamps: [ChangeHash: ChangeStamp] = [:]
        var byID: [ChangeID: ChangeStamp] = [:]
        var rebuilt: [Change] = []
        var runBytes = 0
        for start in stride(from: 0, to: changes.count, by: 2_000) {
            let run = Array(changes[start..<min(start + 2_000, changes.count)])
            let bytes = try ChangeRunCodec.encode(run, of: id) { stamps[$0] }
            runBytes += bytes.count
            let back = try ChangeRunCodec.decode(bytes, document: id) { byID[$0] }
            for change in back {
                stamps[change.hash] = ChangeStamp(change)
                byID[change.id] = ChangeStamp(change)
            }
            rebuilt += back
        }
        try Self.expectSame(rebuilt, changes)
        print("\(name): \(runBytes) bytes in runs of 2,000")
    }

    static func expectSame(_ decoded: [Change], _ changes: [Change]) throws {
        try #require(decoded.count == changes.count)
        for (left, right) in zip(decoded, changes) {
            try #require(left.hash == right.hash && left.encoded() == right.encoded(), "\(left.id) differs")
        }
    }
}
