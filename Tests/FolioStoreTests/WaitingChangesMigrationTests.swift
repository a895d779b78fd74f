import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import GRDB
import Testing

/// A store written before waiting changes named what they wait for keeps its waiting changes when it is opened: each
/// is given a change it waits for, and is applied when that arrives.
@Suite(.workPool) struct WaitingChangesMigrationTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Puts the store file back in the shape of the schema before "v3 waiting changes by dependency", rows kept.
    private func downgrade(_ url: URL) throws {
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE old_pending (
                        document INTEGER NOT NULL,
                        device INTEGER NOT NULL,
                        seq INTEGER NOT NULL,
                        hash BLOB NOT NULL,
                        body BLOB NOT NULL,
                        PRIMARY KEY (document, device, seq)
                    ) WITHOUT ROWID;
                    INSERT INTO old_pending SELECT document, device, seq, hash, body FROM pending;
                    DROP TABLE pending;
                    ALTER TABLE old_pending RENAME TO pending;
                    ALTER TABLE document DROP COLUMN waiting;
                    ALTER TABLE document DROP COLUMN unvouched;
                    DROP TABLE device_head;
                    DROP TABLE device_key;
                    DROP TABLE pending_total;
                    DELETE FROM grdb_migrations
                    WHERE identifier IN (
                        'v3 waiting changes by dependency', 'v4 signed heads', 'v6 pending arrival', 'v8 unvouched counts',
                        'v13 head spans');
                    """)
        }
        try queue.close()
    }

    /// Changes that waited in a store from before signed heads came from peers nothing vouched for: once their
    /// dependencies are in, they wait for a head of their device that reaches them.
    @Test func waitingChangesOfAnOlderStoreAreAppliedWhenTheirDependenciesAndAHeadArrive() throws {
        let a = Device.named("A")
        let b = Device.named("B")
        let storeA = try directory.openStore(for: a)
        let storeB = try directory.openStore(for: b)
        let a1 = try storeA.append(Fixtures.edit("a1"), to: Fixtures.document)
        try storeB.ingest(trusting: [a1])
        let b1 = try storeB.append(Fixtures.edit("b1"), to: Fixtures.document)
        let a2 = try storeA.append(Fixtures.edit("a2"), to: Fixtures.document)

        let url = directory.file("receiver.sqlite")
        var receiver = try directory.openStore("receiver.sqlite", as: .named("Receiver"))
        try receiver.ingest(trusting: [a1])
        #expect(try receiver.ingest(trusting: [b1, a2]).applied.count == 2)
        let c = Device.named("C")
        let storeC = try directory.openStore(for: c)
        try storeC.ingest(trusting: [a1, b1, a2])
        let c1 = try storeC.append(Fixtures.edit("c1"), to: Fixtures.document)
        let c2 = try storeC.append(Fixtures.edit("c2"), to: Fixtures.document)
        let a3 = try storeA.append(Fixtures.edit("a3"), to: Fixtures.document)
        // c2 waits for c1, a4 for a3: each for its own device's previous change.
        try storeA.ingest(trusting: [b1, c1, c2])
        let a4 = try storeA.append(Fixtures.edit("a4"), to: Fixtures.document)
        #expect(try receiver.ingest(trusting: [c2, a4]).deferred == 2)
        try receiver.close()

        try downgrade(url)
        receiver = try directory.openStore("receiver.sqlite", as: .named("Receiver"))
        #expect(try receiver.verify().isSound)
        #expect(Set(try receiver.pendingChanges(of: Fixtures.document).map(\.hash)) == [c2.hash, a4.hash])
        let first = try receiver.ingest(trusting: [c1])
        #expect(first.applied == [c1.id])
        #expect(try receiver.verify().isSound)
        let vouched = try receiver.ingest([c2], heads: [SignedHead(signing: c2, with: .named("C"))])
        #expect(vouched.applied == [c2.id])
        // A head that reaches a4 through a later change of A's: a4 enters with a3, which it waited for.
        let a5 = try storeA.append(Fixtures.edit("a5"), to: Fixtures.document)
        let second = try receiver.ingest([a3, a5], heads: [SignedHead(signing: a5, with: .named("A"))])
        #expect(second.applied == [a3.id, a4.id, a5.id])
        #expect(try receiver.pendingChanges(of: Fixtures.document).isEmpty)
        #expect(try receiver.verify().isSound)
    }

    @Test func aWaitingChangeWhoseBytesNoLongerDecodeIsDroppedNotFatal() throws {
        let storeC = try directory.openStore(for: .named("C"))
        let chain = try storeC.append([Fixtures.edit("c1"), Fixtures.edit("c2")], to: Fixtures.document)
        let url = directory.file("receiver.sqlite")
        var receiver = try directory.openStore("receiver.sqlite", as: .named("Receiver"))
        #expect(try receiver.ingest(trusting: [chain[1]]).deferred == 1)
        try receiver.close()
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in try db.execute(sql: "UPDATE pending SET body = x'01ff'") }
        try queue.close()

        receiver = try directory.openStore("receiver.sqlite", as: .named("Receiver"), checked: false)
        let result = try receiver.ingest(trusting: [chain[0]])
        #expect(result.applied == [chain[0].id])
        #expect(result.rejected.map(\.id) == [chain[1].id])
        #expect(try receiver.pendingChanges(of: Fixtures.document).isEmpty)
        #expect(try receiver.verify().isSound)
        #expect(try receiver.ingest(trusting: [chain[1]]).applied == [chain[1].id], "the real one still gets in")
    }
}
