import FolioCore
import FolioStore
@testable import FolioSync
import Foundation
import Testing

/// Files planted in a shared folder by someone other than the device whose directory holds them: their claims are
/// checked, and none of them can stop a device, or make it stop sharing its changes.
@Suite struct HostileFolderTests {
    let directory: TemporaryDirectory
    let folder: FolderTransport
    static let a = Device.named("A"), b = Device.named("B"), mallory = Device.named("Mallory")

    init() throws {
        directory = try TemporaryDirectory()
        folder = FolderTransport(root: directory.file("Shared"), changesPerFile: 4)
    }

    /// Writes `batch` where its writer's files of its document go, under the name its counts give.
    private func plant(_ batch: FolderBatch) throws {
        let place = directory.file("Shared/\(batch.writer.id)/\(batch.document)")
        try FileManager.default.createDirectory(at: place, withIntermediateDirectories: true)
        try Data(batch.encoded()).write(to: place.appendingPathComponent(batch.fileName))
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
        try plant(FolderBatch(
            writer: Self.mallory, document: Fixtures.document, first: 1, last: .max, vector: vector, devices: [],
            changes: []))

        let storeB = try directory.openStore(for: Self.b)
        try storeB.append(Fixtures.edit("b1"), to: Fixtures.document)
        let report = try folder.sync(storeB)
        #expect(!report.isComplete)
        #expect(report.problems.contains { $0.contains("\(Self.mallory.id)") }, "\(report.problems)")
        #expect(try storeB.vector(of: Fixtures.document) == VersionVector([(Self.a.id, UInt64(1)), (Self.b.id, UInt64(1))]))
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
        try plant(FolderBatch(
            writer: Self.mallory, document: Fixtures.document, first: 1, last: 1, vector: b1.vector, devices: [],
            changes: []))

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
            writer: Self.a, document: Fixtures.document, first: 1, last: .max, vector: vector, devices: [], changes: [])
        try plant(planted)
        let report = try folder.sync(storeA)
        #expect(report.problems.contains { $0.contains(planted.fileName) }, "\(report.problems)")
        _ = try folder.sync(storeB)
        try FileManager.default.removeItem(at: directory.file("Shared/\(Self.a.id)/\(Fixtures.document)/\(planted.fileName)"))

        #expect(try folder.sync(storeA).isComplete)
        #expect(try folder.sync(storeB).isComplete)
        #expect(try storeB.change(a1.hash, of: Fixtures.document) == a1, "A's change reached B through the folder")
        try Convergence.expectConverged([storeA, storeB])
    }
}
