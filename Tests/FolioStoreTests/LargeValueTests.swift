import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Large changes and checkpoints: deflated at rest (large ones in two halves at once), kept decoded for the next
/// read, and read back the same by this store, a reopened one and a peer.
@Suite(.workPool) struct LargeValueTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Text that compresses and repeats across the halves a large value is deflated in (so the second half's
    /// dictionary matters), and bytes that do not compress at all.
    static func payload(_ size: Int, compressible: Bool, seed: UInt64) -> Data {
        var random = SplitMix64(seed: seed)
        if !compressible { return Data((0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }) }
        let words = ["folio", "change", "log", "version", "merge", "the", "of", "a", "é", "👍🏽", "\n"]
        var text = ""
        while text.utf8.count < size { text += words[Int(random.next() % UInt64(words.count))] + " " }
        return Data(text.utf8.prefix(size))
    }

    @Test(arguments: [500, 20_000, 32 * 1024 - 1, 32 * 1024, 32 * 1024 + 1, 100_003, 400_000])
    func largeChangesReadBackTheSameEverywhere(size: Int) throws {
        let clock = Fixtures.clock()
        let store = try directory.openStore(for: .named("A"), clock: clock)
        var written: [Change] = []
        for (index, compressible) in [true, false, true].enumerated() {
            let body = Self.payload(size, compressible: compressible, seed: UInt64(size * 3 + index))
            written.append(try store.append(.edit(Edit(operations: body)), to: Fixtures.document))
        }
        try store.checkInvariants()
        // Read twice (the second read may come from the decoded changes kept in memory), then from a fresh store.
        for _ in 0..<2 {
            #expect(try store.changes(of: Fixtures.document) == written)
            #expect(try store.heads(of: Fixtures.document).map(\.kind) == [written.last!.kind])
            for change in written {
                #expect(try store.change(change.id, of: Fixtures.document)?.kind == change.kind)
                #expect(try store.change(change.hash, of: Fixtures.document)?.kind == change.kind)
            }
        }
        // In a row, text is kept deflated (at least 1 KiB of it, and to well under half: the halves share a
        // dictionary), random bytes as they are. (Closing then folds them into a segment, read back below.)
        let stored = try SQLiteShell.run(
            "SELECT seq, length(body), hex(substr(body, 1, 1)) FROM change ORDER BY seq", on: directory.file("A.sqlite")
        )
        try store.close()
        let rows = stored.output.split(separator: "\n").map { $0.split(separator: "|").map(String.init) }
        #expect(rows.count == 3, "\(stored)")
        for row in rows where row.count == 3 {
            let compressible = row[0] != "2"
            let deflated = row[2] == "C0"
            #expect(deflated == (compressible && size >= 1024), "\(rows)")
            if deflated { #expect(Int(row[1])! < size / 2, "\(rows)") }
        }
        let reopened = try directory.openStore(for: .named("A"))
        let read = try reopened.changes(of: Fixtures.document)
        #expect(read.map(\.kind) == written.map(\.kind) && read.map(\.hash) == written.map(\.hash))
        #expect(try reopened.change(written[1].id, of: Fixtures.document)?.kind == written[1].kind)

        let peer = try directory.openStore(for: .named("B"))
        try reopened.sync(Fixtures.document, to: peer)
        #expect(try peer.changes(of: Fixtures.document).map(\.kind) == written.map(\.kind))
    }

    @Test func largeCheckpointsReadBackTheSame() throws {
        let store = try directory.openStore(for: .named("A"))
        let change = try store.append(Fixtures.edit("x"), to: Fixtures.document)
        let contents = Self.payload(150_000, compressible: true, seed: 7)
        try store.checkpoints.save(of: Fixtures.document, at: change.vector, contents: contents)
        #expect(try store.checkpoints.latest(of: Fixtures.document)?.contents == contents)
        #expect(try store.checkpoints.latest(of: Fixtures.document)?.contents == contents)
        try store.checkInvariants()
        try store.close()
        #expect(
            try directory.openStore(for: .named("A")).checkpoints.latest(of: Fixtures.document)?.contents == contents)
    }
}
