import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A store opened with `StoreAccess.exclusive` behaves as a shared one, owns its file while open, and lets go of it
/// when closed or gone (or leaves its log behind, as a killed process would); `verify(documents:)` checks exactly the
/// documents it is given.
@Suite(.workPool) struct ExclusiveAccessTests {
    let directory: TemporaryDirectory
    let device = Device.named("A")

    init() throws {
        directory = try TemporaryDirectory()
    }

    private func exclusiveStore(_ name: String = "A.sqlite") throws -> ChangeLogStore {
        try ChangeLogStore(at: directory.file(name), device: device, clock: Fixtures.clock(), access: .exclusive)
    }

    @Test func anExclusiveStoreKeepsTheSameLogAsASharedOne() throws {
        let exclusive = try exclusiveStore("exclusive.sqlite")
        let shared = try directory.openStore("shared.sqlite", as: device)
        for store in [exclusive, shared] {
            try store.append((1...5).map { Fixtures.edit("edit \($0)") }, to: Fixtures.document)
            try store.append([Fixtures.edit("other")], to: Fixtures.otherDocument)
        }
        #expect(exclusive.access == .exclusive)
        #expect(try exclusive.changes(of: Fixtures.document) == shared.changes(of: Fixtures.document))
        #expect(try exclusive.summaries().map(\.vector) == shared.summaries().map(\.vector))
        #expect(try exclusive.changeCount() == 6)
        try exclusive.checkInvariants()

        // What an exclusive store wrote, a shared store reads after it is closed, and the other way round.
        try exclusive.close()
        try shared.close()
        let reopened = try directory.openStore("exclusive.sqlite", as: device)
        #expect(try reopened.changeCount() == 6)
        try reopened.close()
        let sharedAgain = try ChangeLogStore(at: directory.file("shared.sqlite"), device: device, access: .exclusive)
        #expect(try sharedAgain.changes(of: Fixtures.document).count == 5)
        try sharedAgain.checkInvariants()
    }

    @Test func noOtherConnectionCanOpenTheFileUntilTheStoreIsClosed() throws {
        let store = try exclusiveStore()
        try store.append([Fixtures.edit("mine")], to: Fixtures.document)
        let refused = #expect(throws: StoreError.self) {
            _ = try ChangeLogStore(at: store.url, device: Device.named("B"), clock: Fixtures.clock())
        }
        #expect(refused?.code == .database, "\(String(describing: refused))")
        #expect(refused?.message.contains("locked") == true, "\(refused?.message ?? "")")
        try store.close()
        let next = try ChangeLogStore(at: store.url, device: Device.named("B"), clock: Fixtures.clock())
        #expect(try next.changeCount() == 1)
    }

    @Test func aStoreThatIsGoneLetsGoOfTheFile() throws {
        var store: ChangeLogStore? = try exclusiveStore()
        try store?.append([Fixtures.edit("mine")], to: Fixtures.document)
        let url = try #require(store?.url)
        store = nil  // a simulated crash drops the store without closing it
        let next = try ChangeLogStore(at: url, device: device, clock: Fixtures.clock(), access: .exclusive)
        #expect(try next.changeCount() == 1)
    }

    @Test func aStoreLeftLikeAKilledProcessKeepsItsLogForTheNextOpen() throws {
        var store: ChangeLogStore? = try exclusiveStore()
        try store!.append((1...3).map { Fixtures.edit("edit \($0)") }, to: Fixtures.document)
        try CrashSimulation.leaveLogOnRelease(of: store!)
        let url = store!.url
        store = nil
        let log = try FileManager.default.attributesOfItem(atPath: url.path + "-wal")[.size] as? Int
        #expect((log ?? 0) > 0, "the write-ahead log stays, unfolded")

        let reopened = try exclusiveStore()
        #expect(try reopened.changes(of: Fixtures.document).count == 3)
        try reopened.checkInvariants()
        try reopened.close()
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"), "close() still folds the log")

        let shared = try directory.openStore("shared.sqlite", as: device)
        let refused = #expect(throws: StoreError.self) { try CrashSimulation.leaveLogOnRelease(of: shared) }
        #expect(refused?.code == .database)
    }

    /// A store killed as a process is (`CrashSimulation.kill`) lets go of its file at once, though references to it
    /// remain; everything that would reach its database afterwards fails with a typed error instead of touching the
    /// closed connection, and the log it left is recovered by the next open.
    @Test func aKilledStoreLetsGoOfItsFileAndRefusesEveryLaterCall() throws {
        let store = try exclusiveStore()
        try store.append((1...3).map { Fixtures.edit("edit \($0)") }, to: Fixtures.document)
        try CrashSimulation.kill(store)

        let calls: [(String, () throws -> Void)] = [
            ("append", { _ = try store.append([Fixtures.edit("late")], to: Fixtures.document) }),
            ("read", { _ = try store.changes(of: Fixtures.document) }),
            ("fold", { try store.foldAll(minimum: 1, minimumBytes: 0) }),
            ("copy", { _ = try store.copyInMemory(named: "copy") }),
            ("close", { try store.close() }),
            ("kill", { try CrashSimulation.kill(store) }),
        ]
        for (name, call) in calls {
            let refused = #expect(throws: StoreError.self, "\(name)") { try call() }
            #expect(refused?.code == .database, "\(name): \(String(describing: refused))")
        }

        let next = try ChangeLogStore(at: store.url, device: device, clock: Fixtures.clock(), access: .exclusive)
        #expect(try next.changes(of: Fixtures.document).count == 3)
        try next.checkInvariants()
    }

    @Test func verifyingSomeDocumentsChecksThoseAndOnlyThose() throws {
        let store = try directory.openStore(for: device)
        let changes = try store.append((1...3).map { Fixtures.edit("edit \($0)") }, to: Fixtures.document)
        try store.append([Fixtures.edit("other")], to: Fixtures.otherDocument)
        try store.close()
        let tampered = try SQLiteShell.run(
            """
            DROP TRIGGER change_is_append_only_on_delete;
            DELETE FROM change WHERE seq = 2 AND document = (SELECT id FROM document WHERE uuid = \(SQLiteShell.blobLiteral(Fixtures.document.uuid.bytes)));
            """, on: store.url)
        try #require(tampered.succeeded, "\(tampered.errors)")

        let reopened = try ChangeLogStore(at: store.url, device: device, clock: Fixtures.clock(), access: .exclusive)
        let other = try reopened.verify(documents: [Fixtures.otherDocument, Fixtures.unknownDocument])
        #expect(other.isSound, "\(other)")
        #expect(other.documents == 1 && other.changes == 1)
        try reopened.checkInvariants(of: [Fixtures.otherDocument])
        #expect(try reopened.verify(documents: []).documents == 0)

        let damaged = try reopened.verify(documents: [Fixtures.document])
        #expect(damaged.firstProblem?.change == changes[2].id, "\(damaged)")
        #expect(damaged.documents == 1)
        #expect(throws: StoreError.self) { try reopened.checkInvariants(of: [Fixtures.document]) }
        #expect(!(try reopened.verify().isSound))
    }
}
