import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// The log is append-only in SQLite itself, and a row altered behind the store's back is found by `verify()`.
@Suite(.workPool) struct TamperingTests {
    let directory: TemporaryDirectory
    let device = Device.named("A")
    let document = Fixtures.document

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Makes a store with four changes, closes it and returns its URL and the changes.
    private func closedStore() throws -> (URL, [Change]) {
        let store = try directory.openStore(for: device)
        let changes = try store.append((1...4).map { Fixtures.edit("edit number \($0)") }, to: document)
        try store.checkInvariants()
        #expect(try store.verify().isSound)
        try store.close()
        return (store.url, changes)
    }

    @Test func theTriggersRefuseToUpdateOrDeleteAChange() throws {
        let (url, changes) = try closedStore()
        let update = try SQLiteShell.run(
            "UPDATE change SET lamport = 99 WHERE \(SQLiteShell.rowCondition(changes[1]));", on: url)
        #expect(!update.succeeded)
        #expect(update.errors.contains("append-only"), "\(update.errors)")
        let delete = try SQLiteShell.run("DELETE FROM change WHERE \(SQLiteShell.rowCondition(changes[1]));", on: url)
        #expect(!delete.succeeded)
        #expect(delete.errors.contains("append-only"), "\(delete.errors)")

        let store = try directory.openStore(for: device)
        #expect(try store.changes(of: document) == changes)
        try store.checkInvariants()
    }

    @Test func anAlteredBodyIsReportedAsTheFirstProblem() throws {
        let (url, changes) = try closedStore()
        let target = changes[1]
        let body = try #require(
            SQLiteShell.body(of: target, replacingLastByteOf: "edit number 2", with: "7"),
            "the operations are in the body")

        let blocked = try SQLiteShell.run(
            "UPDATE change SET body = \(SQLiteShell.blobLiteral(body)) WHERE \(SQLiteShell.rowCondition(target));",
            on: url)
        #expect(!blocked.succeeded, "the trigger must refuse the update")
        let tampered = try SQLiteShell.run(
            """
            DROP TRIGGER change_is_append_only_on_update;
            UPDATE change SET body = \(SQLiteShell.blobLiteral(body)) WHERE \(SQLiteShell.rowCondition(target));
            """, on: url)
        try #require(tampered.succeeded, "\(tampered.errors)")

        let store = try directory.openStore(for: device, checked: false)
        let report = try store.verify()
        #expect(!report.isSound)
        let first = try #require(report.firstProblem)
        #expect(first.change == target.id, "\(report)")
        #expect(first.document == document)
        #expect(first.message.contains("altered"), "\(first)")
        #expect("\(first)".contains("\(target.id.device)#2"), "names the device and seq: \(first)")
        #expect(report.problems.allSatisfy { $0.change != changes[0].id }, "the change before is sound")

        let error = #expect(throws: StoreError.self) { try store.checkInvariants() }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains("\(target.id)") == true, "\(error?.message ?? "")")
    }

    @Test func aDeletedRowIsReportedAsAGap() throws {
        let (url, changes) = try closedStore()
        let tampered = try SQLiteShell.run(
            """
            DROP TRIGGER change_is_append_only_on_delete;
            DELETE FROM change WHERE \(SQLiteShell.rowCondition(changes[1]));
            """, on: url)
        try #require(tampered.succeeded, "\(tampered.errors)")

        let store = try directory.openStore(for: device, checked: false)
        let report = try store.verify()
        let first = try #require(report.firstProblem)
        #expect(first.change == changes[2].id, "the gap is found at the change after it: \(report)")
        #expect(first.message.contains("jump"), "\(first)")
        #expect(throws: StoreError.self) { try store.checkInvariants() }
    }

    @Test func aDamagedBlobIsCorrupt() throws {
        let store = try directory.openStore(for: device)
        let contents = Data("a precious snapshot".utf8)
        let hash = try store.checkpoints.putBlob(contents)
        try store.checkInvariants()
        try store.close()
        let tampered = try SQLiteShell.run(
            "UPDATE blob SET bytes = \(SQLiteShell.blobLiteral(Array("a precious snapsho!".utf8)));", on: store.url)
        try #require(tampered.succeeded, "\(tampered.errors)")

        let reopened = try directory.openStore(for: device, checked: false)
        let error = #expect(throws: StoreError.self) { _ = try reopened.checkpoints.blob(hash) }
        #expect(error?.code == .corrupt)
        #expect(try reopened.verify().firstProblem?.message.contains("blob") == true)
    }
}
