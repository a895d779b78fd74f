import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// `verify(documents:continuing:)` checks what was added since the last check, finds what a full check of the same
/// changes finds, and starts over when it cannot trust what it saw before.
@Suite(.workPool) struct IncrementalVerifyTests {
    let directory: TemporaryDirectory
    let device = Device.named("A")
    let document = Fixtures.document

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Rewrites the body of `change` in the closed store at `url` (the last byte of `text` in its operations),
    /// past the trigger that forbids it.
    private func tamper(with change: Change, text: String, in url: URL) throws {
        let body = try #require(
            SQLiteShell.body(of: change, replacingLastByteOf: text, with: "~"), "the operations hold \(text)")
        let tampered = try SQLiteShell.run(
            """
            DROP TRIGGER change_is_append_only_on_update;
            UPDATE change SET body = \(SQLiteShell.blobLiteral(body)) WHERE \(SQLiteShell.rowCondition(change));
            """, on: url)
        try #require(tampered.succeeded, "\(tampered.errors)")
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func checksWhatArrivedInAnyOrderAndOnlyThat(access: StoreAccess) throws {
        let history = try SampleHistory.make(in: directory)
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        for run in 0..<20 {
            let name = "receiver-\(run).sqlite"
            let store = try directory.openStore(name, as: .named("Receiver"), access: access)
            var progress = VerificationProgress()
            var checked = 0 as UInt64
            let order = history.changes.shuffled(using: &generator)
            for batch in randomBatches(order, sizes: 1...3, using: &generator) {
                try store.ingest(trusting: batch)
                // A local edit now and then, on whatever the store holds.
                if generator.int(in: 0...3) == 0, try !store.changes(of: history.document).isEmpty {
                    _ = try store.append(Fixtures.edit("local \(checked)"), to: history.document)
                }
                let report = try store.verify(documents: [history.document], continuing: &progress)
                let held = try store.vector(of: history.document)
                #expect(report.isSound, "seed \(seed) run \(run): \(report)")
                #expect(
                    UInt64(report.changes) == held.changeCount - checked,
                    "seed \(seed) run \(run): only what arrived is re-hashed")
                #expect(progress.verifiedVector(of: history.document) == held, "seed \(seed) run \(run)")
                checked = held.changeCount
            }
            #expect(try store.verify().isSound, "seed \(seed) run \(run)")
            try store.close()
        }
    }

    @Test func aChangeAlteredBeforeItsFirstCheckIsFoundAndTheDocumentForgotten() throws {
        let store = try directory.openStore(for: device)
        var progress = VerificationProgress()
        try store.append((1...4).map { Fixtures.edit("edit number \($0)") }, to: document)
        #expect(try store.verify(documents: [document], continuing: &progress).changes == 4)
        let later = try store.append((5...6).map { Fixtures.edit("edit number \($0)") }, to: document)
        try store.close()
        try tamper(with: later[0], text: "edit number 5", in: store.url)

        let reopened = try directory.openStore(for: device, checked: false)
        let report = try reopened.verify(documents: [document], continuing: &progress)
        #expect(report.changes == 2, "the four verified before are not re-hashed: \(report)")
        #expect(report.firstProblem?.change == later[0].id, "\(report)")
        #expect(report.firstProblem?.message.contains("altered") == true, "\(report)")
        #expect(progress.verifiedVector(of: document) == nil, "a document with a problem is checked in full next time")
        let again = try reopened.verify(documents: [document], continuing: &progress)
        #expect(again.changes == 6)
        #expect(!again.isSound)
        #expect(throws: StoreError.self) { try reopened.checkInvariants(of: [document], continuing: &progress) }
    }

    @Test func aChangeAlteredAfterItsCheckIsLeftToTheFullCheck() throws {
        let store = try directory.openStore(for: device)
        var progress = VerificationProgress()
        let changes = try store.append((1...3).map { Fixtures.edit("edit number \($0)") }, to: document)
        try store.checkInvariants(of: [document], continuing: &progress)
        try store.close()
        try tamper(with: changes[1], text: "edit number 2", in: store.url)

        let reopened = try directory.openStore(for: device, checked: false)
        #expect(
            try reopened.verify(documents: [document], continuing: &progress).isSound,
            "verified rows are not read again")
        #expect(try reopened.verify().firstProblem?.change == changes[1].id)
    }

    @Test func aVerifiedChangeGoneMissingIsFound() throws {
        let store = try directory.openStore(for: device)
        var progress = VerificationProgress()
        let changes = try store.append((1...4).map { Fixtures.edit("edit number \($0)") }, to: document)
        try store.checkInvariants(of: [document], continuing: &progress)
        try store.close()
        let tampered = try SQLiteShell.run(
            """
            DROP TRIGGER change_is_append_only_on_delete;
            DELETE FROM change WHERE \(SQLiteShell.rowCondition(changes[3]));
            """, on: store.url)
        try #require(tampered.succeeded, "\(tampered.errors)")

        let reopened = try directory.openStore(for: device, checked: false)
        let report = try reopened.verify(documents: [document], continuing: &progress)
        #expect(report.problems.contains { $0.message.contains("verified before are gone") }, "\(report)")
    }

    @Test func progressMadeWithAnotherStoreStartsOver() throws {
        let first = try directory.openStore(for: device)
        let second = try directory.openStore(for: .named("B"))
        try first.append((1...3).map { Fixtures.edit("edit number \($0)") }, to: document)
        try first.sync(document, to: second)
        try second.append(Fixtures.edit("from B"), to: document)

        var progress = VerificationProgress()
        #expect(try first.verify(documents: [document], continuing: &progress).changes == 3)
        let report = try second.verify(documents: [document], continuing: &progress)
        #expect(report.changes == 4, "every change of the other store is checked: \(report)")
        #expect(progress.verifiedVector(of: document) == (try second.vector(of: document)))
    }
}
