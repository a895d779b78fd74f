import FolioCore
import FolioPostgres
import FolioServer
import FolioStore
import FolioSync
import FolioTesting
import Foundation
import Testing

/// The same contract for every implementation of `ServerLog`: a library's SQLite file, and PostgreSQL (with each
/// process's copy of the log).
@Suite(.serialized) struct ServerLogContractTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    static let document = DocumentID(UUIDBytes("5f0c0000-0000-4000-8000-0000000000d1")!)
    static let otherDocument = DocumentID(UUIDBytes("5f0c0000-0000-4000-8000-0000000000d2")!)
    let a = Device.named("A"), b = Device.named("B")

    /// A library's log on a new storage of `backend`; `open()` opens it again, as another process would.
    final class Subject: @unchecked Sendable {
        let open: () throws -> any ServerLog
        private var kept: [Any] = []
        init(open: @escaping () throws -> any ServerLog, kept: [Any]) {
            self.open = open
            self.kept = kept
        }
    }

    private func subject(_ backend: Backend) async throws -> Subject {
        let directory = try TemporaryDirectory()
        switch backend {
        case .sqlite:
            let url = directory.file("notes.sqlite")
            let log = try SQLiteServerLog(at: url)
            // One process at a time uses a SQLite log: "another process" is the same one.
            return Subject(open: { log }, kept: [directory])
        case .postgres:
            let test = try await TestPostgres.fresh()
            let database = try test.open()
            var caches = 0
            return Subject(
                open: {
                    caches += 1
                    return try PostgresServerLog(
                        library: "notes", database: database,
                        cacheDirectory: directory.subdirectory("cache\(caches)"))
                }, kept: [directory, test, database])
        }
    }

    /// `count` changes of `device` in a store of its own, after `on` (all of them as the device's store holds
    /// them), with the heads it signs.
    private func made(
        by device: Device, _ count: Int, in store: ChangeLogStore, document: DocumentID = document
    ) throws -> (changes: [EncodedChange], heads: [SignedHead]) {
        let before = try store.vector(of: document)
        for index in 0..<count {
            _ = try store.append(.edit(Edit(operations: Data("\(device.name)\(index)".utf8))), to: document)
        }
        let changes = try store.changes(of: document, since: before).map(EncodedChange.init)
        return (changes, try store.signedHeads(of: document, since: before))
    }

    @Test(arguments: Backend.allCases) func changesIngestedAreServedAndDuplicatesAreHarmless(_ backend: Backend)
        async throws
    {
        let subject = try await subject(backend)
        let log = try subject.open()
        let store = try ChangeLogStore(inMemoryNamed: "A", device: a)
        let first = try made(by: a, 5, in: store)
        let result = try log.ingest(first.changes, heads: first.heads)
        #expect(result.applied.count == 5)
        #expect(try log.vector(of: Self.document) == (try store.vector(of: Self.document)))
        // Again: nothing new.
        let again = try log.ingest(first.changes, heads: first.heads)
        #expect(again.applied.isEmpty && again.duplicates == 5)

        let served = try log.changes(of: Self.document, since: VersionVector())
        #expect(served.changes.map(\.change.hash) == first.changes.map(\.change.hash))
        #expect(!served.heads.isEmpty && served.heads.allSatisfy(\.isAuthentic))
        let since = first.changes[2].change.vector
        #expect(
            try log.changes(of: Self.document, since: since).changes.map(\.change.hash)
                == first.changes.suffix(2).map(\.change.hash), "only what the peer lacks")
        let summary = try log.summary()
        #expect(summary.vectors[Self.document] == (try store.vector(of: Self.document)))
        #expect(summary.heads[Self.document] == [first.changes.last!.change.hash])
        #expect(try log.contains(first.changes[0].change.hash, of: Self.document))
        #expect(try log.change(first.changes[1].change.id, of: Self.document)?.hash == first.changes[1].change.hash)
        #expect(try log.change(first.changes[3].change.hash, of: Self.document)?.id == first.changes[3].change.id)
        #expect(try log.byteSize() > 0)
    }

    @Test(arguments: Backend.allCases) func aChangeNobodySignedWaitsAndAForgeryIsRefused(_ backend: Backend)
        async throws
    {
        let subject = try await subject(backend)
        let log = try subject.open()
        let store = try ChangeLogStore(inMemoryNamed: "A", device: a)
        let made = try made(by: a, 3, in: store)
        // Without a head: nothing enters, they wait.
        let unsigned = try log.ingest(made.changes, heads: [])
        #expect(unsigned.applied.isEmpty && unsigned.unvouched.count == 3)
        #expect(try log.vector(of: Self.document).isEmpty)
        #expect(try log.waitingChanges(of: Self.document).count == 3)
        // The head comes: they enter.
        let vouched = try log.ingest([made.changes[2]], heads: made.heads)
        #expect(Set(vouched.applied) == Set(made.changes.map(\.change.id)))

        // B signs a head for a change in A's name: refused, nothing stored.
        var vector = made.changes[2].change.vector
        vector[a.id] = 4
        let forged = Change(
            document: Self.document, id: ChangeID(device: a.id, seq: 4), parents: [made.changes[2].change.hash],
            vector: vector, lamport: 4,
            wallTime: Timestamp(millisecondsSince1970: 0), kind: .edit(Edit(operations: Data("forged".utf8))))
        // B's key, B's signature, A's change named.
        let bStore = try ChangeLogStore(inMemoryNamed: "B", device: b)
        let bHead = SignedHead(
            signing: try bStore.append(.edit(Edit(operations: Data("b".utf8))), to: Self.document),
            with: DeviceKey.named("B"))
        let head = SignedHead(
            document: Self.document, change: forged.id, hash: forged.hash, publicKey: bHead.publicKey,
            signature: bHead.signature)
        let result = try log.ingest([EncodedChange(forged)], heads: [head])
        #expect(result.applied.isEmpty)
        #expect(try log.vector(of: Self.document)[a.id] == 3)
    }

    @Test(arguments: Backend.allCases) func changesArrivingBeforeTheirParentsWaitForThem(_ backend: Backend)
        async throws
    {
        let subject = try await subject(backend)
        let log = try subject.open()
        let store = try ChangeLogStore(inMemoryNamed: "A", device: a)
        let made = try made(by: a, 6, in: store)
        // The last three first, with the heads: they wait for their parents.
        let late = try log.ingest(Array(made.changes.suffix(3)), heads: made.heads)
        #expect(late.applied.isEmpty)
        #expect(try log.vector(of: Self.document).isEmpty)
        let early = try log.ingest(Array(made.changes.prefix(3)), heads: made.heads)
        #expect(Set(early.applied) == Set(made.changes.map(\.change.id)), "the waiting ones enter with their parents")
        #expect(
            try log.changes(of: Self.document, since: VersionVector()).changes.map(\.change.hash)
                == made.changes.map(\.change.hash))
    }

    @Test(arguments: Backend.allCases) func anotherChangeUnderAStoredIdentityIsRefused(_ backend: Backend)
        async throws
    {
        let subject = try await subject(backend)
        let log = try subject.open()
        let (one, other) = try clashing()
        _ = try log.ingest(one.changes, heads: one.heads)
        #expect(throws: StoreError.self) { try log.ingest(other.changes, heads: other.heads) }
        #expect(
            try log.changes(of: Self.document, since: VersionVector()).changes.map(\.change.hash)
                == one.changes.map(\.change.hash))
    }

    /// A's seq 1 twice, each signed: a device restored from a backup whose key made a second, different change.
    private func clashing() throws -> (
        one: (changes: [EncodedChange], heads: [SignedHead]), other: (changes: [EncodedChange], heads: [SignedHead])
    ) {
        let one = try made(by: a, 1, in: try ChangeLogStore(inMemoryNamed: "A", device: a))
        let clone = try ChangeLogStore(inMemoryNamed: "A2", device: a)
        _ = try clone.append(.edit(Edit(operations: Data("made elsewhere".utf8))), to: Self.document)
        let other = (
            changes: try clone.changes(of: Self.document).map(EncodedChange.init),
            heads: try clone.signedHeads(of: Self.document)
        )
        #expect(one.changes[0].change.id == other.changes[0].change.id)
        #expect(one.changes[0].change.hash != other.changes[0].change.hash)
        return (one, other)
    }

    @Test(arguments: Backend.allCases) func devicesAreNamed(_ backend: Backend) async throws {
        let subject = try await subject(backend)
        let log = try subject.open()
        try log.name(Device(id: a.id, name: "Ada's iPad"))
        try log.name(Device(id: a.id, name: "Ada's Mac"))
        try log.name(log.device)  // the server's own identity is never named
        let devices = try log.summary().devices
        #expect(devices == [Device(id: a.id, name: "Ada's Mac"), log.device].sorted { $0.id < $1.id })
        // A person is kept beside the name, and replaced with it; a device known only by its person is listed.
        try log.name(Device(id: a.id, name: "Ada's Mac", person: "Ada"))
        try log.name(Device(id: b.id, name: "", person: "Bo"))
        try log.name(Device(id: b.id, name: "", person: "Bea"))
        #expect(
            try log.summary().devices
                == [
                    Device(id: a.id, name: "Ada's Mac", person: "Ada"), Device(id: b.id, name: "", person: "Bea"),
                    log.device,
                ]
                .sorted { $0.id < $1.id })
    }

    @Test(arguments: Backend.allCases) func blobsAreKeptOnceAndOnlyWhenAChangeRefersToThem(_ backend: Backend)
        async throws
    {
        let subject = try await subject(backend)
        let log = try subject.open()
        let image = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let reference = BlobReference(to: image)
        #expect(try log.storeBlobs([image]).refused == [reference], "no change refers to it yet")
        let store = try ChangeLogStore(inMemoryNamed: "A", device: a)
        let change = try store.append(
            [.edit(Edit(operations: Data("image".utf8)))], to: Self.document, blobs: [[reference]],
            blobBytes: [reference: image])[0]
        _ = try log.ingest([EncodedChange(change)], heads: try store.signedHeads(of: Self.document))
        #expect(try log.lacking([reference]) == [reference])
        #expect(try log.missingBlobs(limit: 10) == [reference])
        #expect(try log.storeBlobs([image]).stored == [reference])
        #expect(try log.storeBlobs([image]).stored.isEmpty, "kept once")
        #expect(try log.lacking([reference]).isEmpty)
        #expect(try log.missingBlobs(limit: 10).isEmpty)
        #expect(try log.blobs([reference]) == [reference: image])
    }

    // MARK: Several processes (PostgreSQL)

    @Test func whatOneProcessStoresAnotherServes() async throws {
        let subject = try await subject(.postgres)
        let first = try subject.open()
        let second = try subject.open()
        #expect(first.device == second.device, "one server identity per library, whichever process")
        let storeA = try ChangeLogStore(inMemoryNamed: "A", device: a)
        let storeB = try ChangeLogStore(inMemoryNamed: "B", device: b)
        let fromA = try made(by: a, 4, in: storeA)
        _ = try first.ingest(fromA.changes, heads: fromA.heads)
        #expect(
            try second.changes(of: Self.document, since: VersionVector()).changes.map(\.change.hash)
                == fromA.changes.map(\.change.hash))
        // B builds on what it got through the second process; the first serves it.
        _ = try storeB.ingest(fromA.changes.map(\.change), heads: fromA.heads)
        let fromB = try made(by: b, 3, in: storeB)
        _ = try second.ingest(fromB.changes, heads: fromB.heads)
        #expect(try first.vector(of: Self.document) == (try storeB.vector(of: Self.document)))
        // The same changes through both at once: harmless.
        let both = try made(by: a, 2, in: storeA)
        async let one = offThePoolIngest(first, both)
        async let two = offThePoolIngest(second, both)
        _ = try await (one, two)
        #expect(try first.vector(of: Self.document)[a.id] == 6)
        #expect(try second.vector(of: Self.document)[a.id] == 6)
        #expect(
            try subject.open().changes(of: Self.document, since: VersionVector()).changes.count == 9,
            "a new process rebuilds its copy from PostgreSQL")
    }

    @Test func anotherChangeUnderAStoredIdentityIsRefusedWhicheverProcessTookTheFirst() async throws {
        let subject = try await subject(.postgres)
        let first = try subject.open()
        let second = try subject.open()
        let (one, other) = try clashing()
        _ = try second.vector(of: Self.document)  // the second's copy is up to date before the first writes
        _ = try first.ingest(one.changes, heads: one.heads)
        #expect(throws: StoreError.self) { try second.ingest(other.changes, heads: other.heads) }
        #expect(
            try second.changes(of: Self.document, since: VersionVector()).changes.map(\.change.hash)
                == one.changes.map(\.change.hash), "the second process serves what PostgreSQL holds")
    }

    /// A write counts as stored only once PostgreSQL has answered its commit: a check the database makes at commit
    /// (here a deferred constraint trigger that refuses every change) fails the ingest, and nothing is stored.
    @Test func aWriteWhoseCommitFailsIsNotAcknowledged() async throws {
        let test = try await TestPostgres.fresh()
        let database = try test.open()
        defer { database.close() }
        let directory = try TemporaryDirectory()
        let log = try PostgresServerLog(
            library: "notes", database: database, cacheDirectory: directory.subdirectory("cache"))
        try await test.execute(
            """
            CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'refused at commit'; END $$
            """)
        try await test.execute(
            """
            CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON folio_change
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit()
            """)
        let store = try ChangeLogStore(inMemoryNamed: "A", device: a)
        let made = try made(by: a, 3, in: store)
        let error = #expect(throws: ServerError.self) { try log.ingest(made.changes, heads: made.heads) }
        #expect(error?.message.contains("refused at commit") == true, "\(String(describing: error))")
        #expect(try await test.count("folio_change") == 0)
        // The copy, which took the changes, was thrown away: the log serves what PostgreSQL holds.
        #expect(try log.vector(of: Self.document).changeCount == 0)
    }

    @Test func aLongWriteOfOneDeviceReachesAnotherProcessWhole() async throws {
        let subject = try await subject(.postgres)
        let first = try subject.open()
        let store = try ChangeLogStore(inMemoryNamed: "A", device: a)
        // More than one catch-up batch, written at once, vouched for by heads at its end.
        let made = try made(by: a, 5_000, in: store)
        _ = try first.ingest(made.changes, heads: made.heads)
        let second = try subject.open()
        #expect(try second.vector(of: Self.document)[a.id] == 5_000)
        let served = try second.changes(of: Self.document, since: VersionVector())
        #expect(served.changes.count == 5_000)
        #expect(!served.heads.isEmpty, "the heads that vouch for them are passed on too")
    }

    @Test func whatAnotherProcessStoredIsReportedOnceWhicheverCallReadItFirst() async throws {
        let subject = try await subject(.postgres)
        let first = try subject.open()
        let second = try subject.open()
        _ = try second.catchUp()  // the copy is built: what follows is new to it
        let store = try ChangeLogStore(inMemoryNamed: "A", device: a)
        let made = try made(by: a, 3, in: store)
        _ = try first.ingest(made.changes, heads: made.heads)
        // Another call (a hello, a batch's vectors) reads it first.
        #expect(try second.vector(of: Self.document)[a.id] == 3)
        #expect(try second.catchUp() == [Self.document: VersionVector()], "passed on to the devices once")
        #expect(try second.catchUp().isEmpty)
    }

    @Test func aChangeThatWaitedForAParentStoredElsewhereIsStoredWhenItEnters() async throws {
        let subject = try await subject(.postgres)
        let first = try subject.open()
        let second = try subject.open()
        let store = try ChangeLogStore(inMemoryNamed: "A", device: a)
        let made = try made(by: a, 2, in: store)
        // The child reaches the second process first: it waits there for its parent.
        let waiting = try second.ingest([made.changes[1]], heads: made.heads)
        #expect(waiting.applied.isEmpty)
        let parentHead = SignedHead(signing: made.changes[0].change, with: DeviceKey.named("A"))
        #expect(try first.ingest([made.changes[0]], heads: [parentHead]).applied.count == 1)
        // The second takes the parent from PostgreSQL; the child enters with it, and is stored in turn.
        #expect(try second.vector(of: Self.document)[a.id] == 2)
        let third = try subject.open()
        #expect(try third.vector(of: Self.document)[a.id] == 2, "PostgreSQL holds the child too")
    }

    private func offThePoolIngest(
        _ log: any ServerLog, _ batch: (changes: [EncodedChange], heads: [SignedHead])
    ) async throws -> IngestResult {
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try log.ingest(batch.changes, heads: batch.heads) })
            }
        }
    }
}
