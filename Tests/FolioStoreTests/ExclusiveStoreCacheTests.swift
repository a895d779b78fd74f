import FolioCore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@testable import FolioStore

/// An exclusive store remembers every document's frontier and every device's name: the memory follows commits,
/// forgets what a rolled-back transaction staged, and `verify` notices when it differs from the file.
@Suite(.workPool) struct ExclusiveStoreCacheTests {
    let directory: TemporaryDirectory
    let a = Device.named("A")
    let b = Device.named("B")
    let c = Device.named("C")

    init() throws {
        directory = try TemporaryDirectory()
    }

    @Test func aRolledBackIngestLeavesTheRememberedFrontiersAsTheyWere() throws {
        // Documents are ingested in identity order: the first one's frontier is staged before the second one clashes.
        let (first, second) = (Fixtures.document, Fixtures.otherDocument)
        #expect(first < second)
        let valid = try directory.openStore(for: c).append(Fixtures.edit("valid"), to: first)
        let original = try directory.openStore(for: b).append(Fixtures.edit("original"), to: second)
        let clone = try directory.openStore("clone.sqlite", as: b)
        let clash = try clone.append(Fixtures.edit("clone"), to: second)
        #expect(clash.id == original.id && clash.hash != original.hash)

        let store = try directory.openStore(for: a, access: .exclusive)
        try store.ingest(trusting: [original])
        let before = try store.summaries().map { "\($0.document) \($0.vector) \($0.heads)" }
        let devicesBefore = try store.devices.all()
        #expect(devicesBefore.map(\.id).sorted() == [a.id, b.id].sorted())
        let error = #expect(throws: StoreError.self) { try store.ingest(trusting: [valid, clash]) }
        #expect(error?.code == .integrity)

        #expect(try store.vector(of: first).isEmpty, "the first document's staged frontier was dropped")
        #expect(try store.summaries().map { "\($0.document) \($0.vector) \($0.heads)" } == before)
        #expect(try store.documents() == [second])
        #expect(try store.changeCount() == 1)
        #expect(try store.devices.all() == devicesBefore, "C, recorded by the rolled-back ingest, is not remembered")
        try store.checkInvariants()

        // The store goes on from what it committed.
        #expect(try store.ingest(trusting: [valid]).applied == [valid.id])
        #expect(try store.vector(of: first) == valid.vector)
        #expect(try store.changeCount() == 2)
        #expect(try store.devices.all().map(\.id).sorted() == [a.id, b.id, c.id].sorted())
        try store.checkInvariants()
    }

    @Test func registeredNamesAreRememberedAndMatchTheFile() throws {
        let store = try directory.openStore(for: a, access: .exclusive)
        let external = store.key.externalKey.device(named: "A (another program)")
        try store.append([Fixtures.edit("external")], to: Fixtures.document, author: external)
        try store.devices.register(Device(id: b.id, name: "B's phone"))
        try store.devices.register(Device(id: b.id, name: "B's phone"))
        let remembered = try store.devices.all()
        #expect(remembered == [a, external, Device(id: b.id, name: "B's phone")].sorted { $0.id < $1.id })
        try store.checkInvariants()
        try store.close()
        #expect(try directory.openStore(for: a).devices.all() == remembered)
    }

    @Test func whatAnExclusiveStoreRemembersIsWhatItsFileSaysAfterReopening() throws {
        let store = try directory.openStore(for: a, access: .exclusive)
        try store.append((1...3).map { Fixtures.edit("edit \($0)") }, to: Fixtures.document)
        try store.append([Fixtures.edit("other")], to: Fixtures.otherDocument)
        let remembered = try store.summaries().map { "\($0.document) \($0.vector) \($0.heads)" }
        let heads = try store.heads(of: Fixtures.document)
        #expect(heads.map(\.id) == [ChangeID(device: a.id, seq: 3)])
        try store.close()

        let shared = try directory.openStore(for: a)
        #expect(try shared.summaries().map { "\($0.document) \($0.vector) \($0.heads)" } == remembered)
        try shared.close()
        let reopened = try directory.openStore(for: a, access: .exclusive)
        #expect(try reopened.summaries().map { "\($0.document) \($0.vector) \($0.heads)" } == remembered)
        #expect(try reopened.changeCount() == 4)
        #expect(try reopened.heads(of: Fixtures.document) == heads, "read from the file")
        #expect(try reopened.heads(of: Fixtures.document) == heads, "then kept with its tip")
        try reopened.append([Fixtures.edit("after")], to: Fixtures.document)
        #expect(try reopened.heads(of: Fixtures.document).map(\.id) == [ChangeID(device: a.id, seq: 4)])
    }

    @Test func rememberedLifecycleChangesFollowAppendsIngestsAndRollbacks() throws {
        let store = try directory.openStore(for: a, access: .exclusive)
        let create = try store.append(
            .lifecycle(.create(name: "Notes", type: "public.plain-text", container: .local)), to: Fixtures.document)
        try store.append([Fixtures.edit("text")], to: Fixtures.document)
        let row = try #require(
            try store.read("finding the row") { db in try store.rowID(of: Fixtures.document, in: db) })
        func remembered() -> [Change]? { store.exclusiveCache?.document(row)?.lifecycle }
        #expect(remembered() == [create], "a document new to the store is remembered from its first change")
        #expect(try store.lifecycleChanges(of: Fixtures.document) == [create])
        try store.checkInvariants()

        // A lifecycle change of its own, then one from a peer: each joins what is remembered as it commits.
        let rename = try store.append(.lifecycle(.rename(to: "Ideas")), to: Fixtures.document)
        #expect(remembered() == [create, rename])
        #expect(try store.lifecycleChanges(of: Fixtures.document) == [create, rename])
        let peer = try directory.openStore(for: b)
        try store.sync(Fixtures.document, to: peer)
        let move = try peer.append(.lifecycle(.move(to: .shared)), to: Fixtures.document)
        try store.ingest(trusting: [move])
        #expect(remembered() == [create, rename, move])
        #expect(try store.lifecycleChanges(of: Fixtures.document) == [create, rename, move])

        // An ingest that rolls back leaves the remembered changes as they were, though it staged a lifecycle
        // change (documents are ingested in identity order: the lifecycle change comes before the clash).
        #expect(Fixtures.document < Fixtures.otherDocument)
        let original = try peer.append(Fixtures.edit("original"), to: Fixtures.otherDocument)
        try store.ingest(trusting: [original])
        let clash = try directory.openStore("clone.sqlite", as: b).append(
            Fixtures.edit("clone"), to: Fixtures.otherDocument)
        #expect(clash.id == original.id && clash.hash != original.hash)
        let delete = try peer.append(.lifecycle(.delete), to: Fixtures.document)
        let before = try store.lifecycleChanges(of: Fixtures.document)
        #expect(throws: StoreError.self) { try store.ingest(trusting: [delete, clash]) }
        #expect(try store.lifecycleChanges(of: Fixtures.document) == before)
        try store.checkInvariants()
        #expect(try store.ingest(trusting: [delete]).applied == [delete.id])
        #expect(try store.lifecycleChanges(of: Fixtures.document) == before + [delete])
        try store.checkInvariants()
        try store.close()
        // Reopened, the store reads the lifecycle from the file at the first read, then remembers it.
        let reopened = try directory.openStore(for: a, access: .exclusive)
        #expect(reopened.exclusiveCache?.document(row)?.lifecycle == nil)
        #expect(try reopened.lifecycleChanges(of: Fixtures.document) == before + [delete])
        #expect(reopened.exclusiveCache?.document(row)?.lifecycle == before + [delete])
    }

    @Test func verifyNoticesRememberedLifecycleChangesThatDifferFromTheFile() throws {
        let store = try directory.openStore(for: a, access: .exclusive)
        let create = try store.append(
            .lifecycle(.create(name: "Notes", type: "public.plain-text", container: .local)), to: Fixtures.document)
        try store.append(.lifecycle(.rename(to: "Ideas")), to: Fixtures.document)
        // A bug's work: the memory is told the document's lifecycle is its creation alone.
        let row = try #require(
            try store.read("finding the row") { db in try store.rowID(of: Fixtures.document, in: db) })
        store.exclusiveCache?.remember(lifecycle: [create], documentRow: row)
        #expect(try store.lifecycleChanges(of: Fixtures.document) == [create])
        let report = try store.verify(documents: [Fixtures.document])
        #expect(
            report.firstProblem?.message.contains("lifecycle changes the store keeps in memory") == true, "\(report)")
    }

    @Test func verifyNoticesARememberedFrontierThatDiffersFromTheFile() throws {
        let store = try directory.openStore(for: a, access: .exclusive)
        try store.append((1...2).map { Fixtures.edit("edit \($0)") }, to: Fixtures.document)
        try store.checkInvariants()

        // A bug's work: the memory is told the document has no change, and the file is left as it is.
        try store.write("forgetting a frontier") { db in
            let row = try #require(try store.rowID(of: Fixtures.document, in: db))
            store.exclusiveCache?.stage(
                Frontier(empty: row), of: Fixtures.document, hasWaiting: nil, lifecycleAdded: [], in: db)
        }
        let report = try store.verify(documents: [Fixtures.document])
        #expect(report.firstProblem?.message.contains("in memory") == true, "\(report)")
        #expect(throws: StoreError.self) { try store.checkInvariants() }
    }

    @Test func verifyNoticesARememberedDeviceNameThatDiffersFromTheFile() throws {
        let store = try directory.openStore(for: a, access: .exclusive)
        try store.write("misnaming a device") { db in
            store.exclusiveCache?.stage(Device(id: a.id, name: "not A"), in: db)
        }
        #expect(try store.devices.all().first?.name == "not A")
        let report = try store.verify(checkingPages: false)
        #expect(report.firstProblem?.message.contains("in memory") == true, "\(report)")
    }
}
