import FolioCore
import FolioTestWorkPool
import Foundation
import Testing

@testable import FolioDocuments

/// The versions a device records of a document: coalesced within a window, thinned with age, bounded, and read back
/// from bytes anything may have written (damaged bytes read as no versions, never a trap).
@Suite(.workPool) struct RecordedVersionsTests {
    static let minute: Int64 = 60_000
    static let start = Timestamp(millisecondsSince1970: 1_767_225_600_000)

    static func head(_ index: Int) -> ChangeHash { ChangeHash(hashing: Array("\(index)".utf8)) }

    static func vector(_ count: UInt64) -> VersionVector {
        VersionVector([(DeviceID(UUIDBytes(bytes: Array(repeating: 7, count: 16))), count)])
    }

    /// Records a version every `every` minutes for `minutes` minutes, each with new heads.
    static func typing(minutes: Int64, every: Int64) -> RecordedVersions {
        var versions = RecordedVersions()
        var index = 0
        for at in stride(from: 0, to: minutes, by: Int(every)) {
            index += 1
            versions.record(
                .saved, at: start.advanced(by: Int64(at) * minute), heads: [head(index)], vector: vector(UInt64(index)))
        }
        return versions
    }

    @Test func aWorkingDayOfSavesIsTensOfVersions() {
        // Eight hours, a save every 30 seconds: 960 saves.
        var versions = RecordedVersions()
        for index in 0..<960 {
            versions.record(
                .saved, at: Self.start.advanced(by: Int64(index) * 30_000), heads: [Self.head(index)],
                vector: Self.vector(UInt64(index + 1)))
        }
        #expect(versions.entries.count == 48, "one per ten minutes")
        #expect(versions.entries.last?.heads == [Self.head(959)], "the latest state is kept")
    }

    @Test func olderVersionsThinToOneAnHourThenOneADay() {
        let versions = Self.typing(minutes: 40 * 24 * 60, every: 20)
        let entries = versions.entries
        let now = entries.last!.date.millisecondsSince1970
        let day = 24 * 60 * Self.minute
        let recent = entries.filter { now - $0.date.millisecondsSince1970 <= day }
        let hourly = entries.filter { entry in
            let age = now - entry.date.millisecondsSince1970
            return age > day && age <= 30 * day
        }
        let daily = entries.filter { now - $0.date.millisecondsSince1970 > 30 * day }
        let recentExpected = 24 * 60 / 20 + 1
        let hourlyExpected = 29 * 24
        #expect(recent.count == recentExpected)
        #expect(abs(hourly.count - hourlyExpected) <= 1, "\(hourly.count)")
        #expect((9...11).contains(daily.count), "\(daily.count)")
        #expect(entries.count <= RecordedVersions.limit)
    }

    @Test func theSameHeadsAreNotRecordedTwiceButARestoreAlwaysIs() {
        var versions = RecordedVersions()
        func record(_ occasion: HistoryVersion.Occasion, minute: Int64, head: Int) -> RecordedVersions.Recorded {
            versions.record(
                occasion, at: Self.start.advanced(by: minute * Self.minute), heads: [Self.head(head)],
                vector: Self.vector(UInt64(head)))
        }
        let first = record(.saved, minute: 0, head: 1)
        let again = record(.closed, minute: 3, head: 1)
        let restored = record(.restored, minute: 4, head: 2)
        let after = record(.saved, minute: 5, head: 3)
        let replacing = record(.saved, minute: 6, head: 4)
        #expect(
            [first, again, restored, after, replacing] == [.changed, .unchanged, .changed, .changed, .replacedLatest])
        #expect(versions.entries.map(\.occasion) == [.saved, .restored, .saved], "a restore is never coalesced")
        #expect(versions.entries.last?.heads == [Self.head(4)], "a save in the window replaces the one before")
    }

    @Test func versionsRoundTripAndDamagedBytesReadAsNone() {
        let versions = Self.typing(minutes: 3 * 24 * 60, every: 45)
        let encoded = versions.encoded()
        #expect(RecordedVersions(decoding: encoded) == versions)
        #expect(RecordedVersions(decoding: nil).entries.isEmpty)
        #expect(RecordedVersions(decoding: Data([2])).entries.isEmpty, "an unknown format")
        // Every truncation, and a byte flipped at every offset of a short history, reads as none or as versions,
        // never traps.
        for length in 0..<encoded.count where length % 7 == 0 {
            #expect(RecordedVersions(decoding: encoded.prefix(length)).entries.isEmpty)
        }
        let short = Self.typing(minutes: 30, every: 11).encoded()
        for offset in short.indices {
            var damaged = short
            damaged[offset] ^= 0xFF
            _ = RecordedVersions(decoding: damaged)
        }
        // Dates far from 1970 are refused when read, so that recording after them cannot overflow.
        for date in [Int64.min, Int64.max, -(1 << 53), 1 << 53] {
            var far = BinaryWriter()
            far.write(byte: 1)
            far.write(varint: 1)
            far.write(byte: 0)
            far.write(signed: date)
            far.write(varint: 0)
            far.write(varint: 1)
            far.write(raw: Self.head(1).bytes)
            far.write(lengthPrefixed: Data(Self.vector(1).encoded()))
            var read = RecordedVersions(decoding: Data(far.bytes))
            #expect(read.entries.isEmpty, "date \(date)")
            read.record(.saved, at: Self.start, heads: [Self.head(2)], vector: Self.vector(2))
        }
        var read = RecordedVersions(decoding: encoded)
        read.record(
            .saved, at: Self.start.advanced(by: 400 * 24 * 60 * Self.minute), heads: [Self.head(0)],
            vector: Self.vector(9))
        #expect(read.entries.last?.heads == [Self.head(0)])
        var huge = BinaryWriter()
        huge.write(byte: 1)
        huge.write(varint: UInt64.max)
        #expect(RecordedVersions(decoding: Data(huge.bytes)).entries.isEmpty, "a count past the bytes")
    }
}
