import FolioCore
import FolioStore
import Foundation

/// The versions this device recorded of one document (saved, closed, received, restored), coalesced, kept in the
/// store's local state (never synced: each device keeps its own, as each Mac keeps its own file versions).
///
/// Coalescing keeps the list short however often the document is saved or takes in others' typing:
/// - a version whose heads are those of the latest one is not recorded again;
/// - a version within ``window`` of the start of the latest one's window replaces it (the latest state of each
///   window is kept), unless either was a restore;
/// - versions older than a day keep the latest of each hour, older than 30 days the latest of each day;
/// - at most ``limit`` are kept, the oldest dropped first.
struct RecordedVersions: Equatable {
    struct Entry: Equatable {
        var occasion: HistoryVersion.Occasion
        var date: Timestamp
        /// When the window this entry stands for began (its first version's date).
        var windowStart: Timestamp
        var heads: [ChangeHash]
        var vector: VersionVector
    }

    private(set) var entries: [Entry] = []

    /// How long a stretch of recorded versions coalesces into one.
    static var window: Int64 { 10 * 60 * 1000 }
    /// The most versions kept.
    static var limit: Int { 1_000 }
    /// Dates read back must lie within this many milliseconds of 1970.
    static var dateBound: Int64 { 1 << 53 }
    /// The most heads one version keeps (a version showing more merged is kept with its first this many).
    static var headLimit: Int { 64 }

    init() {}

    /// What recording a version did to the list.
    enum Recorded: Equatable {
        /// Nothing: the latest version has the same heads.
        case unchanged
        /// The latest version was replaced by the new one, in its window; nothing else changed.
        case replacedLatest
        /// A version was added, or older ones thinned.
        case changed
    }

    /// Records a version.
    @discardableResult
    mutating func record(
        _ occasion: HistoryVersion.Occasion, at date: Timestamp, heads: [ChangeHash], vector: VersionVector
    ) -> Recorded {
        let heads = Array(heads.prefix(Self.headLimit))
        if let last = entries.last, last.heads == heads, occasion != .restored { return .unchanged }
        let entry = Entry(occasion: occasion, date: date, windowStart: date, heads: heads, vector: vector)
        if let last = entries.last, last.occasion != .restored, occasion != .restored,
            date.millisecondsSince1970 - last.windowStart.millisecondsSince1970 < Self.window,
            date >= last.date
        {
            entries[entries.count - 1] = Entry(
                occasion: occasion, date: date, windowStart: last.windowStart, heads: heads, vector: vector)
            let count = entries.count
            thin(now: date)
            // Thinning only drops versions: the same count means it changed nothing.
            return entries.count == count ? .replacedLatest : .changed
        }
        entries.append(entry)
        thin(now: date)
        return .changed
    }

    /// Keeps the latest version of each hour past a day and of each day past 30 days, and at most ``limit``.
    private mutating func thin(now: Timestamp) {
        let hour: Int64 = 3_600_000
        let day = 24 * hour
        func bucket(_ entry: Entry) -> Int64? {
            let age = now.millisecondsSince1970 - entry.date.millisecondsSince1970
            if age > 30 * day { return entry.date.millisecondsSince1970 / day * 2 }
            if age > day { return entry.date.millisecondsSince1970 / hour * 2 + 1 }
            return nil
        }
        var kept: [Entry] = []
        for entry in entries {
            if let last = kept.last, let previous = bucket(last), previous == bucket(entry) {
                kept[kept.count - 1] = entry
            } else {
                kept.append(entry)
            }
        }
        if kept.count > Self.limit { kept.removeFirst(kept.count - Self.limit) }
        entries = kept
    }

    // MARK: Persistence

    /// The key under which the versions are kept in the store's local state.
    static var stateKey: LocalStateKey { LocalStateKey("history") }

    /// Format 1:
    ///
    /// ```
    /// 1, entry count, per entry: occasion (byte), date (signed varint, ms), date − window start (varint, ms),
    ///     head count, heads (32 bytes each), vector (length-prefixed, its own encoding)
    /// ```
    ///
    /// A version that reads another format, or damaged bytes, reads as no versions (losing them loses no change).
    func encoded() -> Data {
        var writer = BinaryWriter()
        writer.write(byte: 1)
        writer.write(varint: UInt64(entries.count))
        for entry in entries {
            writer.write(byte: Self.occasionTags.firstIndex(of: entry.occasion).map(UInt8.init) ?? 0)
            writer.write(signed: entry.date.millisecondsSince1970)
            writer.write(
                varint: UInt64(max(0, entry.date.millisecondsSince1970 - entry.windowStart.millisecondsSince1970)))
            writer.write(varint: UInt64(entry.heads.count))
            for head in entry.heads { writer.write(raw: head.bytes) }
            writer.write(lengthPrefixed: Data(entry.vector.encoded()))
        }
        return Data(writer.bytes)
    }

    /// The occasions as their bytes in ``encoded()`` (a byte is its index).
    private static let occasionTags: [HistoryVersion.Occasion] = [.saved, .closed, .received, .restored]

    /// Decodes saved versions; damaged or unknown bytes read as none.
    init(decoding data: Data?) {
        guard let data else { return }
        let decoded: [Entry]? = data.withUnsafeBytes { buffer in
            do throws(CodecError) {
                var reader = BinaryReader(buffer)
                guard try reader.nextByte("the history format") == 1 else { return nil }
                let count = try reader.nextCount("versions", elementSize: 4, limit: Self.limit)
                var entries: [Entry] = []
                entries.reserveCapacity(count)
                for _ in 0..<count {
                    let tag = Int(try reader.nextByte("a version's occasion"))
                    guard tag < Self.occasionTags.count else { return nil }
                    let date = try reader.nextSigned("a version's date")
                    let span = try reader.nextVarint("a version's window")
                    // Dates within ±2^53 ms (285,000 years) of 1970: the coalescing arithmetic on them cannot overflow.
                    let bound = UInt64(Self.dateBound)
                    guard date.magnitude < bound, span < bound, (date - Int64(span)).magnitude < bound else {
                        return nil
                    }
                    let headCount = try reader.nextCount("a version's heads", elementSize: 32, limit: Self.headLimit)
                    guard headCount > 0 else { return nil }
                    var heads: [ChangeHash] = []
                    for _ in 0..<headCount { heads.append(ChangeHash(bytes: try reader.nextRaw(32, "a head"))) }
                    let vectorBytes = try reader.nextLengthPrefixed("a version's vector", limit: 1 << 20)
                    guard let vector = try? VersionVector(decoding: vectorBytes) else { return nil }
                    entries.append(
                        Entry(
                            occasion: Self.occasionTags[tag], date: Timestamp(millisecondsSince1970: date),
                            windowStart: Timestamp(millisecondsSince1970: date - Int64(span)), heads: heads,
                            vector: vector))
                }
                return reader.isAtEnd ? entries : nil
            } catch {
                return nil
            }
        }
        entries = decoded ?? []
    }
}
