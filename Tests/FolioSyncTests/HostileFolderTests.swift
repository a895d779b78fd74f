import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@testable import FolioSync

/// Files planted in a shared folder by someone other than the device whose directory holds them: their claims are
/// checked, and none of them can stop a device, or make it stop sharing its changes.
@Suite(.workPool) struct HostileFolderTests {
    let directory: TemporaryDirectory
    let folder: FolderTransport
    static let a = Device.named("A"), b = Device.named("B"), mallory = Device.named("Mallory")

    init() throws {
        directory = try TemporaryDirectory()
        folder = FolderTransport(root: directory.file("Shared"), changesPerFile: 4)
    }

    /// Writes `batch` where its writer's files of its document go, under the name its counts give, signed with
    /// `key` (by default the writer's own).
    private func plant(_ batch: FolderBatch, signedWith key: DeviceKey? = nil) throws {
        let place = directory.file("Shared/\(batch.writer.id)/\(batch.document)")
        try FileManager.default.createDirectory(at: place, withIntermediateDirectories: true)
        let signer = key ?? DeviceKey.known(batch.writer.id)!
        try Data(batch.encoded(signedWith: signer)).write(to: place.appendingPathComponent(batch.fileName))
    }

    /// A file in a device's own directory that the device did not sign (someone else made it in its name, with an
    /// export vector claiming more than the device wrote) is passed over and replaced: the device goes on writing.
    @Test func aFileInADevicesNameThatItDidNotSignIsPassedOverAndReplaced() throws {
        let storeA = try directory.openStore(for: Self.a)
        let storeB = try directory.openStore(for: Self.b)
        let a1 = try storeA.append(Fixtures.edit("a1"), to: Fixtures.document)
        #expect(try folder.sync(storeA).isComplete)
        let a2 = try storeA.append(Fixtures.edit("a2"), to: Fixtures.document)
        // Mallory writes the next file of A's, claiming that A already put a2 there; the file holds nothing.
        let forged = FolderBatch(
            writer: Self.a, document: Fixtures.document, first: 2, last: 2, vector: a2.vector, devices: [], changes: [],
            heads: [])
        try plant(forged, signedWith: DeviceKey.known(Self.mallory.id)!)
        #expect(throws: CodecError.self) {
            try FolderBatch(decoding: forged.encoded(signedWith: DeviceKey.known(Self.mallory.id)!))
        }

        let report = try folder.sync(storeA)
        #expect(
            report.problems.contains { $0.contains(forged.fileName) && $0.contains("not a file of this device") },
            "\(report.problems)")
        #expect(report.changesSent == 1, "A writes a2 although the forged file claims it")
        _ = try folder.sync(storeB)
        #expect(try storeB.change(a1.hash, of: Fixtures.document) == a1)
        #expect(try storeB.change(a2.hash, of: Fixtures.document) == a2, "A's change reached B through the folder")
        try Convergence.expectConverged([storeA, storeB])
    }

    /// Vectors whose change count does not fit in 64 bits: two entries past the limit on sequence numbers, and
    /// 4,096 devices at the limit.
    static let overflowingVectors: [(devices: Int, seq: UInt64)] = [(2, 1 << 63), (4096, ChangeLimits.counter)]

    static func overflowingVector(devices: Int, seq: UInt64, including extra: DeviceID? = nil) -> VersionVector {
        var entries: [(DeviceID, UInt64)] = (0..<devices).map { index in
            (DeviceID(UUIDBytes(high: 0xBAD, low: UInt64(index))), seq)
        }
        if let extra { entries.append((extra, seq)) }
        return VersionVector(entries)
    }

    @Test(arguments: overflowingVectors)
    func aBatchWhoseVectorCountsPast64BitsIsSkippedAndSyncingGoesOn(devices: Int, seq: UInt64) throws {
        let storeA = try directory.openStore(for: Self.a)
        try storeA.append(Fixtures.edit("a1"), to: Fixtures.document)
        #expect(try folder.sync(storeA).isComplete)
        let vector = Self.overflowingVector(devices: devices, seq: seq)
        try plant(
            FolderBatch(
                writer: Self.mallory, document: Fixtures.document, first: 1, last: .max, vector: vector, devices: [],
                changes: [], heads: []))

        let storeB = try directory.openStore(for: Self.b)
        try storeB.append(Fixtures.edit("b1"), to: Fixtures.document)
        let report = try folder.sync(storeB)
        #expect(!report.isComplete)
        #expect(report.problems.contains { $0.contains("\(Self.mallory.id)") }, "\(report.problems)")
        #expect(
            try storeB.vector(of: Fixtures.document) == VersionVector([(Self.a.id, UInt64(1)), (Self.b.id, UInt64(1))]))
        // The honest peer still gets everything, and a second sync reads the bad file again without harm.
        #expect(try folder.sync(storeA).changesApplied == 1)
        _ = try folder.sync(storeB)
        try Convergence.expectConverged([storeA, storeB])
    }

    @Test func aBatchThatClaimsChangesTheFolderLacksDoesNotStopTheirOwnerFromSharingThem() throws {
        let storeA = try directory.openStore(for: Self.a)
        let storeB = try directory.openStore(for: Self.b)
        let b1 = try storeB.append(Fixtures.edit("b1"), to: Fixtures.document)
        // Mallory's file holds no change but says the folder holds B's first change: it does not.
        try plant(
            FolderBatch(
                writer: Self.mallory, document: Fixtures.document, first: 1, last: 1, vector: b1.vector, devices: [],
                changes: [], heads: []))

        _ = try folder.sync(storeB)
        _ = try folder.sync(storeA)
        #expect(try storeA.change(b1.hash, of: Fixtures.document) == b1, "B's change reached A through the folder")
        try Convergence.expectConverged([storeA, storeB])
    }

    /// A device trusts no file to say what it has written itself: one planted among its own files holds its
    /// writing back while it is there (as deleting the device's files would), and leaves nothing behind.
    @Test(arguments: overflowingVectors)
    func aFilePlantedAmongADevicesOwnLeavesNothingBehindOnceRemoved(devices: Int, seq: UInt64) throws {
        let storeA = try directory.openStore(for: Self.a)
        let storeB = try directory.openStore(for: Self.b)
        let a1 = try storeA.append(Fixtures.edit("a1"), to: Fixtures.document)
        // A file in A's own directory, with A's name as writer, whose vector counts past 64 bits.
        let vector = Self.overflowingVector(devices: devices, seq: seq, including: Self.a.id)
        let planted = FolderBatch(
            writer: Self.a, document: Fixtures.document, first: 1, last: .max, vector: vector, devices: [], changes: [],
            heads: [])
        try plant(planted)
        let report = try folder.sync(storeA)
        #expect(report.problems.contains { $0.contains(planted.fileName) }, "\(report.problems)")
        _ = try folder.sync(storeB)
        try FileManager.default.removeItem(
            at: directory.file("Shared/\(Self.a.id)/\(Fixtures.document)/\(planted.fileName)"))

        #expect(try folder.sync(storeA).isComplete)
        #expect(try folder.sync(storeB).isComplete)
        #expect(try storeB.change(a1.hash, of: Fixtures.document) == a1, "A's change reached B through the folder")
        try Convergence.expectConverged([storeA, storeB])
    }

    /// A file holding a change the store refuses (one with the identity of a change it has, or in its own name)
    /// skips that change, reported; the sync goes on, both ways.
    @Test func aChangeTheStoreRefusesSkipsItselfNotTheSync() throws {
        let storeA = try directory.openStore(for: Self.a)
        let storeB = try directory.openStore(for: Self.b)
        let b1 = try storeB.append(Fixtures.edit("b1"), to: Fixtures.document)
        let other = try storeB.append(Fixtures.edit("b's other"), to: Fixtures.otherDocument)
        // Mallory's own b1, with B's identity and other contents, and an "a1" A never made.
        let fakeB1 = Change(
            document: Fixtures.document, id: b1.id, parents: [], vector: b1.vector, lamport: 1,
            wallTime: Fixtures.start, kind: Fixtures.edit("not B's"))
        let fakeA1 = Change(
            document: Fixtures.document, id: ChangeID(device: Self.a.id, seq: 1), parents: [],
            vector: VersionVector([(Self.a.id, UInt64(1))]), lamport: 1, wallTime: Fixtures.start,
            kind: Fixtures.edit("not A's"))
        try plant(
            FolderBatch(
                writer: Self.mallory, document: Fixtures.document, first: 1, last: 2,
                vector: fakeB1.vector.merging(fakeA1.vector), devices: [],
                changes: [EncodedChange(fakeB1), EncodedChange(fakeA1)], heads: []))

        let fromB = try folder.sync(storeB)
        #expect(fromB.problems.contains { $0.contains("\(b1.id)") && $0.contains("refused") }, "\(fromB.problems)")
        let fromA = try folder.sync(storeA)
        #expect(fromA.problems.contains { $0.contains("refused") }, "\(fromA.problems)")
        // Whichever b1 A took first, B's change of the other document and everything A has reach B.
        #expect(try storeA.change(other.hash, of: Fixtures.otherDocument) == other)
        let a2 = try storeA.append(Fixtures.edit("a's own"), to: Fixtures.otherDocument)
        _ = try folder.sync(storeA)
        _ = try folder.sync(storeB)
        #expect(try storeB.change(a2.hash, of: Fixtures.otherDocument) == a2)
    }

    /// Changes a store turns away because too many wait are read again at the next sync, not lost.
    @Test func changesTurnedAwayAreReadAgain() throws {
        let storeA = try directory.openStore(for: Self.a)
        let chain = try storeA.append((1...4).map { Fixtures.edit("a\($0)") }, to: Fixtures.document)
        #expect(try folder.sync(storeA).isComplete)
        // The folder's files hold a2...a4 first (a later file) and a1 last: rewrite them as one file each, backwards.
        let place = directory.file("Shared/\(Self.a.id)/\(Fixtures.document)")
        for name in try FileManager.default.contentsOfDirectory(atPath: place.path) {
            try FileManager.default.removeItem(at: place.appendingPathComponent(name))
        }
        var vector = VersionVector()
        for (index, change) in chain.enumerated().reversed() {
            vector = VersionVector([(Self.a.id, UInt64(index + 1))])
            try plant(
                FolderBatch(
                    writer: Self.a, document: Fixtures.document, first: UInt64(index + 1), last: UInt64(index + 1),
                    vector: vector, devices: [], changes: [EncodedChange(change)],
                    heads: [SignedHead(signing: change, with: DeviceKey.known(Self.a.id)!)]))
        }
        // Files are read in order of their counts, so a1 comes first: make a1's file unreadable for now.
        let first = place.appendingPathComponent(FolderBatch.fileName(first: 1, last: 1))
        let saved = try Data(contentsOf: first)
        try Data("damaged".utf8).write(to: first)

        let cramped = try ChangeLogStore(
            at: directory.file("B.sqlite"), device: Self.b, clock: ManualClock(start: Fixtures.start),
            limits: StoreLimits(waitingChangesPerDocument: 1))
        let report = try folder.sync(cramped)
        #expect(report.problems.contains { $0.contains("turned away") }, "\(report.problems)")
        #expect(try cramped.pendingChanges(of: Fixtures.document).count == 1)
        try saved.write(to: first)
        _ = try folder.sync(cramped)
        _ = try folder.sync(cramped)
        #expect(try cramped.changes(of: Fixtures.document) == chain)
    }
}
