import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A store written before compact segments, by an older build of Folio (`Fixtures/README.md` says how), opens with
/// this one: it migrates forward, holds the very changes it held, verifies sound, folds its history into segments
/// and reopens. A store that lists a schema step this build does not know, or holds a segment in a run format it
/// does not know, is refused rather than misread.
@Suite(.workPool) struct PreSegmentsMigrationTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/pre-segments-store.sqlite.gz")
    static let olderSteps = [
        "v1 change log", "v2 resolution index", "v3 waiting changes by dependency", "v4 signed heads",
        "v5 unpublished documents", "v6 pending arrival",
    ]

    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// The fixture, decompressed into the test's directory.
    private func olderStore() throws -> URL {
        let url = directory.file("older.sqlite")
        try Gunzip.decompress(try Data(contentsOf: Self.fixture)).write(to: url)
        return url
    }

    /// One line per row of `sql`'s result, read with the `sqlite3` tool.
    private func rows(_ sql: String, on url: URL) throws -> [String] {
        let outcome = try SQLiteShell.run(sql, on: url)
        try #require(outcome.succeeded, "\(sql): \(outcome.errors)")
        return outcome.output.split(separator: "\n").map(String.init)
    }

    /// Per document, the hashes of its changes as the file holds them, in hex.
    private func changeRows(on url: URL) throws -> [String: Set<String>] {
        var hashes: [String: Set<String>] = [:]
        for row in try rows(
            "SELECT hex(d.uuid), hex(c.hash) FROM change c JOIN document d ON d.id = c.document", on: url)
        {
            let fields = row.split(separator: "|").map(String.init)
            try #require(fields.count == 2)
            hashes[fields[0], default: []].insert(fields[1])
        }
        return hashes
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02X", $0) }.joined()
    }

    /// What a store shows of each of its documents.
    private struct Contents: Equatable {
        var changes: [DocumentID: [Change]] = [:]
        var heads: [DocumentID: [ChangeHash]] = [:]
        var lifecycle: [DocumentID: [ChangeHash]] = [:]
        var vectors: [DocumentID: VersionVector] = [:]

        init(_ store: ChangeLogStore) throws {
            for document in try store.documents() {
                changes[document] = try store.changes(of: document)
                heads[document] = try store.heads(of: document).map(\.hash)
                lifecycle[document] = try store.lifecycleChanges(of: document).map(\.hash)
                vectors[document] = try store.vector(of: document)
            }
        }

        /// Per document's identity in hex, the hashes of its changes in hex.
        var hashes: [String: Set<String>] {
            Dictionary(
                uniqueKeysWithValues: changes.map { (hex($0.key.uuid.bytes), Set($0.value.map { hex($0.hash.bytes) })) }
            )
        }
    }

    @Test func aStoreWrittenBeforeSegmentsMigratesForwardAndFolds() throws {
        let url = try olderStore()
        // The fixture is of the format before segments: its steps end at v6, it has no segment table, 4 KiB pages.
        #expect(try rows("SELECT identifier FROM grdb_migrations ORDER BY rowid", on: url) == Self.olderSteps)
        #expect(try rows("SELECT name FROM sqlite_master WHERE name = 'segment'", on: url).isEmpty)
        #expect(try rows("PRAGMA page_size", on: url) == ["4096"])
        let written = try changeRows(on: url)
        #expect(written.count == 3 && written.values.reduce(0) { $0 + $1.count } == 28)

        let owner = try #require(try DeviceRegistry.localIdentity(ofStoreAt: url))
        #expect(owner.name == "iPad")
        #expect(owner.person == "", "a store of before persons is read without one")
        let namesBefore = try rows("SELECT hex(uuid), name FROM device ORDER BY id", on: url)
        var store = try ChangeLogStore(at: url, key: owner.key, deviceName: owner.name)
        try store.checkInvariants()
        let report = try store.verify()
        #expect(report.isSound, "\(report.problems)")
        let before = try Contents(store)
        #expect(before.hashes == written, "the migrated store reads other changes than the older build wrote")
        for (document, changes) in before.changes {
            for change in changes {
                let again = try Change(decoding: change.encoded(), document: document)
                #expect(again.hash == change.hash)
            }
        }
        #expect(try store.changeCount() == 28)
        let steps = try rows("SELECT identifier FROM grdb_migrations ORDER BY rowid", on: url)
        #expect(
            steps == Self.olderSteps + [
                "v7 compact segments", "v8 unvouched counts", "v9 checkpoint manifests", "v10 segment seqs",
                "v11 device people", "v12 removed local copies", "v13 head spans",
            ])
        // The devices keep their names, with no person yet.
        #expect(try rows("SELECT hex(uuid), name FROM device ORDER BY id", on: url) == namesBefore)
        #expect(try rows("SELECT count(*) FROM device WHERE person <> ''", on: url) == ["0"])

        // Every document's history but its heads into segments: it reads back the same, and verifies.
        var folded = 0
        for document in before.changes.keys { folded += try store.fold(document) }
        #expect(folded == 28 - before.heads.values.reduce(0) { $0 + $1.count })
        #expect(try Contents(store) == before)
        #expect(try store.verify().isSound)
        let segments = try rows("SELECT count(*), sum(count) FROM segment", on: url)
        #expect(segments == ["3|\(folded)"])

        // A new change is made on the folded heads; closed and reopened, the store holds it and the rest.
        let notes = try #require(before.changes.max { $0.value.count < $1.value.count }?.key)
        let next = try store.append(.edit(Edit(operations: Data([1, 0, 1, 33]))), to: notes)
        #expect(next.parents == before.heads[notes])
        try store.close()
        store = try ChangeLogStore(at: url, key: owner.key, deviceName: owner.name)
        var after = try Contents(store)
        #expect(after.changes[notes]?.last == next)
        after.changes[notes]?.removeLast()
        #expect(after.changes == before.changes)
        #expect(try store.verify().isSound)
        try store.close()
        // The page size stays what the older build chose.
        #expect(try rows("PRAGMA page_size", on: url) == ["4096"])
    }

    @Test func aMigratedStoreThatListsAStepOfANewerFolioIsRefusedAndLeftAsItIs() throws {
        let url = try olderStore()
        let owner = try #require(try DeviceRegistry.localIdentity(ofStoreAt: url))
        let store = try ChangeLogStore(at: url, key: owner.key, deviceName: owner.name)
        try store.close()
        try #require(
            try SQLiteShell.run("INSERT INTO grdb_migrations VALUES ('v8 from a newer Folio')", on: url).succeeded)
        let bytes = try Data(contentsOf: url)

        let error = #expect(throws: StoreError.self) {
            _ = try ChangeLogStore(at: url, key: owner.key, deviceName: owner.name)
        }
        #expect(error?.code == .newerFormat, "\(String(describing: error))")
        #expect(error?.message.contains("v8 from a newer Folio") == true)
        #expect(try Data(contentsOf: url) == bytes, "a refused store was modified")
    }

    @Test func aSegmentInARunFormatThisBuildDoesNotKnowIsRefusedNotMisread() throws {
        let url = try olderStore()
        let owner = try #require(try DeviceRegistry.localIdentity(ofStoreAt: url))
        var store = try ChangeLogStore(at: url, key: owner.key, deviceName: owner.name)
        let documents = try store.documents()
        for document in documents { try #require(try store.fold(document) > 0) }
        try store.close()
        // The first byte of a run is its format; a newer Folio's would be another.
        try #require(
            try SQLiteShell.run("UPDATE segment SET bytes = x'03' || substr(bytes, 2)", on: url).succeeded)

        store = try ChangeLogStore(at: url, key: owner.key, deviceName: owner.name)
        let report = try store.verify()
        #expect(!report.isSound)
        #expect(report.problems.contains { $0.message.contains("run format 3 is not supported") }, "\(report.problems)")
        for document in documents {
            let error = #expect(throws: StoreError.self) { _ = try store.changes(of: document) }
            #expect(error?.message.contains("run format 3 is not supported") == true, "\(String(describing: error))")
        }
        try store.close()
    }
}
