import FolioCore
import FolioStore
import FolioSync
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@Suite(.workPool) struct FolderTransportTests {
    let directory: TemporaryDirectory
    let folder: FolderTransport
    static let a = Device.named("A"), b = Device.named("B"), c = Device.named("C")

    init() throws {
        directory = try TemporaryDirectory()
        folder = FolderTransport(root: directory.file("Shared"), changesPerFile: 4)
    }

    /// The batch files under the folder, as `<device name>/<document>/<file>`, sorted.
    func batchFiles() throws -> [String] {
        let root = directory.file("Shared").path
        guard let all = FileManager.default.enumerator(atPath: root)?.allObjects as? [String] else { return [] }
        return all.filter { $0.hasSuffix(".changes") }.sorted()
    }

    @Test func twoStoresConvergeThroughAFolder() throws {
        let storeA = try directory.openStore(for: Self.a)
        let storeB = try directory.openStore(for: Self.b)
        try storeA.append((1...6).map { Fixtures.edit("a\($0)") }, to: Fixtures.document)
        try storeA.append(Fixtures.edit("a's note"), to: Fixtures.otherDocument)
        try storeB.append(Fixtures.edit("b1"), to: Fixtures.document)

        let first = try folder.sync(storeA)
        #expect(first.isComplete && first.changesSent == 7 && first.messagesSent == 3, "\(first)")
        let second = try folder.sync(storeB)
        #expect(
            second.isComplete && second.changesReceived == 7 && second.changesApplied == 7 && second.changesSent == 1,
            "\(second)")
        let third = try folder.sync(storeA)
        #expect(third.changesReceived == 1 && third.changesSent == 0, "\(third)")
        try Convergence.expectConverged([storeA, storeB])
        #expect(try storeB.devices.all().contains(Self.a))

        // Nothing new: nothing read, nothing written.
        for store in [storeA, storeB] {
            let idle = try folder.sync(store)
            #expect(idle.isComplete && idle.messagesSent == 0 && idle.messagesReceived == 0, "\(idle)")
        }
        let files = try batchFiles()
        #expect(files.count == 4, "\(files)")
        #expect(files.allSatisfy { FileManager.default.fileExists(atPath: directory.file("Shared/\($0)").path) })
        #expect(files.contains("\(Self.a.id)/\(Fixtures.document)/1-4.changes"))
        #expect(files.contains("\(Self.a.id)/\(Fixtures.document)/5-6.changes"))
    }

    /// A batch file holds at most `bytesPerFile` bytes of changes (one larger change alone), so that no file grows past
    /// what readers accept, whatever the changes weigh.
    @Test func batchFilesAreBoundedInBytes() throws {
        let storeA = try directory.openStore(for: Self.a)
        let storeB = try directory.openStore(for: Self.b)
        let big = String(repeating: "x", count: 3_000)
        try storeA.append(
            [Fixtures.edit("a1"), Fixtures.edit("a2"), Fixtures.edit(big), Fixtures.edit("a4"), Fixtures.edit("a5")],
            to: Fixtures.document)
        let byBytes = FolderTransport(root: directory.file("Shared"), changesPerFile: 100, bytesPerFile: 2_000)

        let sent = try byBytes.sync(storeA)
        #expect(sent.isComplete && sent.changesSent == 5 && sent.messagesSent == 3, "\(sent)")
        let files = try batchFiles().map { $0.split(separator: "/").last.map(String.init) ?? "" }
        #expect(
            files == ["1-2.changes", "3-3.changes", "4-5.changes"], "the large change alone, the small ones together")
        try byBytes.sync(storeB)
        try Convergence.expectConverged([storeA, storeB])
    }

    @Test func peersThatNeverRunAtTheSameTimeConverge() throws {
        var expected: [Convergence.Snapshot] = []
        // Each device opens its store, edits, syncs and closes, one after the other, twice round.
        for round in 0..<2 {
            for device in [Self.a, Self.b, Self.c] {
                let store = try directory.openStore(for: device)
                try store.append(Fixtures.edit("\(device.name) round \(round)"), to: Fixtures.document)
                try store.append(
                    Fixtures.edit("\(device.name) own \(round)"),
                    to: DocumentID(UUIDBytes(high: 9, low: UInt64(device.name.utf8.first!))))
                #expect(try folder.sync(store).isComplete)
                try store.checkInvariants()
                try store.close()
            }
        }
        // A last turn for the two that synced before the others' last edits.
        for device in [Self.a, Self.b, Self.c] {
            let store = try directory.openStore(for: device)
            #expect(try folder.sync(store).isComplete)
            expected.append(try Convergence.snapshot(store))
            try store.checkInvariants()
            try store.close()
        }
        #expect(expected[0] == expected[1] && expected[1] == expected[2])
        #expect(expected[0].documents.count == 4 && expected[0].pending == 0)
        let shared = try #require(expected[0].documents.firstIndex(of: Fixtures.document))
        #expect(expected[0].vectors[shared].changeCount == 6)
    }

    @Test func aChangeLearnedElsewhereIsPassedOnAndNotWrittenTwice() throws {
        let storeA = try directory.openStore(for: Self.a)
        let storeB = try directory.openStore(for: Self.b)
        let storeC = try directory.openStore(for: Self.c)
        // C never uses the folder: A learns C's change over the in-memory network, then writes it for B.
        try storeC.append(Fixtures.edit("c1"), to: Fixtures.document)
        try InMemoryHub(seed: 1).sync(storeA, with: storeC)
        try storeA.append(Fixtures.edit("a1, after c1"), to: Fixtures.document)
        #expect(try folder.sync(storeA).changesSent == 2)
        let atB = try folder.sync(storeB)
        #expect(atB.changesApplied == 2)
        // B read them from the folder, so it writes none of them back.
        #expect(atB.changesSent == 0)
        try storeB.append(Fixtures.edit("b1"), to: Fixtures.document)
        #expect(try folder.sync(storeB).changesSent == 1)
        #expect(try folder.sync(storeA).changesApplied == 1)
        try Convergence.expectConverged([storeA, storeB])
    }

    @Test func syncingAfterOneNewChangeReadsOnlyThatChange() throws {
        let storeA = try directory.openStore(for: Self.a)
        let storeB = try directory.openStore(for: Self.b)
        let folder = FolderTransport(root: directory.file("Shared"))
        for batch in 0..<10 {
            try storeA.append((0..<1000).map { Fixtures.edit("edit \(batch * 1000 + $0)") }, to: Fixtures.document)
        }
        _ = try folder.sync(storeA)
        #expect(try folder.sync(storeB).changesApplied == 10_000)
        try storeA.append(Fixtures.edit("the new one"), to: Fixtures.document)
        let written = try folder.sync(storeA)
        #expect(written.changesSent == 1 && written.changesReceived == 0)
        let read = try folder.sync(storeB)
        #expect(read.changesReceived == 1 && read.messagesReceived == 1 && read.changesApplied == 1)
        try Convergence.expectConverged([storeA, storeB])
    }

    @Test func twoStoresEditingAndSyncingAtOnceConverge() async throws {
        let stores = try [Self.a, Self.b].map { try directory.openStore(for: $0) }
        let folder = self.folder
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, store) in stores.enumerated() {
                group.addTask {
                    for round in 0..<15 {
                        let document = round % 3 == 0 ? Fixtures.otherDocument : Fixtures.document
                        try store.append(
                            (0...(round % 3)).map { Fixtures.edit("\(index) round \(round) #\($0)") }, to: document)
                        _ = try folder.sync(store)
                        try store.checkInvariants()
                    }
                }
            }
            try await group.waitForAll()
        }
        for store in stores + stores { #expect(try folder.sync(store).isComplete) }
        try Convergence.expectConverged(stores)
        #expect(
            try stores[0].vector(of: Fixtures.document).changeCount
                + stores[0].vector(of: Fixtures.otherDocument).changeCount == 60)
        // Every change was written to the folder once, by its author.
        let names = try batchFiles()
        #expect(names.allSatisfy { !$0.contains(".tmp-") })
    }

    @Test func aDamagedFileIsReportedAndTheRestIsRead() throws {
        let storeA = try directory.openStore(for: Self.a)
        let storeB = try directory.openStore(for: Self.b)
        try storeA.append((1...6).map { Fixtures.edit("a\($0)") }, to: Fixtures.document)
        try storeA.append(Fixtures.edit("note"), to: Fixtures.otherDocument)
        _ = try folder.sync(storeA)
        // Flip a byte of the second file of the first document, and leave a temporary file behind.
        let damaged = directory.file("Shared/\(Self.a.id)/\(Fixtures.document)/5-6.changes")
        var bytes = try Data(contentsOf: damaged)
        bytes[bytes.count / 2] ^= 0xFF
        try FileManager.default.removeItem(at: damaged)
        try bytes.write(to: damaged)
        try Data("half written".utf8).write(to: directory.file("Shared/\(Self.a.id)/\(Fixtures.document)/.tmp-crashed"))

        let report = try folder.sync(storeB)
        #expect(!report.isComplete && report.messagesRejected == 1)
        #expect(
            report.problems.count == 1 && report.problems[0].contains("5-6.changes")
                && report.problems[0].contains("checksum"), "\(report.problems)")
        #expect(try storeB.vector(of: Fixtures.document)[Self.a.id] == 4)
        #expect(try storeB.vector(of: Fixtures.otherDocument)[Self.a.id] == 1)
        try storeB.checkInvariants()

        // Once the file is whole again (a sync service delivers it), the next sync reads it.
        try FileManager.default.removeItem(at: damaged)
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: damaged)
        #expect(try folder.sync(storeB).isComplete)
        try Convergence.expectConverged([storeA, storeB])
    }

    @Test func everyTruncationOfABatchFileIsRefused() throws {
        let storeA = try directory.openStore(for: Self.a)
        try storeA.append((1...2).map { Fixtures.edit("a\($0)") }, to: Fixtures.document)
        _ = try folder.sync(storeA)
        let file = directory.file("Shared/\(Self.a.id)/\(Fixtures.document)/1-2.changes")
        let bytes = try Data(contentsOf: file)
        try FileManager.default.removeItem(at: file)
        for length in stride(from: 0, to: bytes.count, by: 7) {
            try bytes.prefix(length).write(to: file)
            let storeB = try ChangeLogStore(at: directory.file("B\(length).sqlite"), device: Self.b)
            let report = try folder.sync(storeB)
            #expect(
                !report.isComplete && report.messagesRejected == 1 && report.changesReceived == 0,
                "cut to \(length) bytes: \(report)")
            #expect(try storeB.documents().isEmpty)
            try storeB.close()
            try FileManager.default.removeItem(at: file)
        }
    }

    @Test func aLostCursorIsRecoveredFromTheNewestFile() throws {
        let storeA = try directory.openStore(for: Self.a)
        let storeB = try directory.openStore(for: Self.b)
        try storeA.append((1...5).map { Fixtures.edit("a\($0)") }, to: Fixtures.document)
        _ = try folder.sync(storeA)
        // As if A crashed after publishing its file and before recording it.
        try storeA.syncCursors.set(
            VersionVector(), SyncCursorKey(peer: "folder \(try folder.identity()) \(Self.a.id)"),
            of: Fixtures.document)
        try storeA.append(Fixtures.edit("a6"), to: Fixtures.document)
        let report = try folder.sync(storeA)
        #expect(report.isComplete && report.changesSent == 1, "\(report)")
        #expect(try batchFiles() == ["1-4", "5-5", "6-6"].map { "\(Self.a.id)/\(Fixtures.document)/\($0).changes" })
        #expect(try folder.sync(storeB).changesApplied == 6)
        try Convergence.expectConverged([storeA, storeB])
    }

    @Test func aDamagedIdentityFileIsAMalformedFolder() throws {
        let store = try directory.openStore(for: Self.a)
        try FileManager.default.createDirectory(at: directory.file("Shared"), withIntermediateDirectories: true)
        try Data("not a folder id\n".utf8).write(to: directory.file("Shared/folio-sync-folder"))
        let error = #expect(throws: SyncError.self) { try folder.sync(store) }
        #expect(error?.code == .malformed)
    }

    @Test func theFolderConformsToTheTransportProtocol() async throws {
        let storeA = try directory.openStore(for: Self.a)
        let storeB = try directory.openStore(for: Self.b)
        try storeA.append(Fixtures.edit("a1"), to: Fixtures.document)
        let transport: any SyncTransport = folder
        _ = try await transport.sync(storeA)
        #expect(try await transport.sync(storeB).changesApplied == 1)
    }

    /// A device that removed a document's local copy reads its own files of it back from the folder (nowhere else
    /// holds them), may go on writing once it read them, and its next change follows the last the folder held: a
    /// reader of the folder takes it. A folder that never held the document says nothing of it.
    @Test func aRemovedDocumentComesBackFromTheDevicesOwnFiles() throws {
        let storeA = try directory.openStore(for: Self.a)
        let storeB = try directory.openStore(for: Self.b)
        let document = Fixtures.document
        try storeA.append((1...6).map { Fixtures.edit("a\($0)") }, to: document)
        #expect(try folder.sync(storeA).isComplete)
        #expect(try folder.sync(storeB).changesApplied == 6)
        // Two more that never reach the folder, then the removal.
        try storeA.append([Fixtures.edit("a7"), Fixtures.edit("a8")], to: document)
        try storeA.removeLocalCopy(of: document)

        // Another folder, which never held the document, does not say it gave all of it.
        let elsewhere = FolderTransport(root: directory.file("Elsewhere"), changesPerFile: 4)
        let empty = try elsewhere.sync(storeA)
        #expect(empty.isComplete && empty.caughtUpDocuments.isEmpty, "\(empty)")

        let back = try folder.sync(storeA)
        #expect(back.isComplete && back.caughtUpDocuments.contains(document), "\(back)")
        #expect(try storeA.vector(of: document)[Self.a.id] == 6)
        #expect(try storeA.settleRemovedOwnChanges(of: document))
        let next = try storeA.append(Fixtures.edit("a7 again"), to: document)
        #expect(next.id.seq == 7)
        let sent = try folder.sync(storeA)
        #expect(sent.isComplete && sent.changesSent == 1, "\(sent)")
        let received = try folder.sync(storeB)
        #expect(received.isComplete && received.changesApplied == 1 && received.problems.isEmpty, "\(received)")
        #expect(try storeB.heads(of: document).map(\.hash) == [next.hash])
    }
}
