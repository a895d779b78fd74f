import FolioCore
import Foundation

/// Which changes a segment holds, per device: the lowest and the highest seq of that device's changes in it. Kept in
/// the segment's row beside its bytes (the `seqs` column), so that a reader finds the segment holding a change
/// without decoding the ones before it (see `docs/compact-history.md`, "Reading").
///
/// Layout: a varint entry count, then per device, in ascending order of device: the device (16 B), the lowest seq
/// (varint) and the highest minus the lowest (varint). A store file may come from anywhere: decoding checks every
/// count and bound, and a reader that finds the seqs wrong (the segment lacks a change they promise) falls back to
/// reading the segments in order.
struct SegmentSeqs: Equatable, Sendable {
    /// Per device, the seqs of its changes in the segment (every seq between the ends, as folds write them), by
    /// device.
    private(set) var entries: [(device: DeviceID, seqs: ClosedRange<UInt64>)] = []

    /// The most devices a segment's seqs may name (as many as a run's device table).
    static let deviceLimit = ChangeRunCodec.Limits.devices

    /// The seqs of `changes`, a segment's.
    init(_ changes: some Sequence<Change>) {
        var ranges: [DeviceID: ClosedRange<UInt64>] = [:]
        for change in changes {
            let seq = change.id.seq
            if let known = ranges[change.id.device] {
                ranges[change.id.device] = min(known.lowerBound, seq)...max(known.upperBound, seq)
            } else {
                ranges[change.id.device] = seq...seq
            }
        }
        entries = ranges.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Decodes stored seqs.
    ///
    /// - Throws: ``CodecError`` when the bytes are truncated, name too many devices or a device twice or out of
    ///   order, hold a seq outside `1…ChangeLimits.counter`, or are followed by more bytes.
    init(decoding data: Data) throws(CodecError) {
        let decoded: Result<[(device: DeviceID, seqs: ClosedRange<UInt64>)], CodecError> = data.withUnsafeBytes {
            buffer in
            do throws(CodecError) {
                var reader = BinaryReader(buffer)
                let count = try reader.nextCount(
                    "the number of devices in a segment's seqs", elementSize: 18, limit: Self.deviceLimit)
                var entries: [(device: DeviceID, seqs: ClosedRange<UInt64>)] = []
                entries.reserveCapacity(count)
                for _ in 0..<count {
                    let offset = reader.offset
                    let device = DeviceID(
                        UUIDBytes(high: try reader.nextFixed("a device"), low: try reader.nextFixed("a device")))
                    if let previous = entries.last?.device, !(previous < device) {
                        throw CodecError(.notCanonical, "a segment's seqs name devices out of order", at: offset)
                    }
                    let low = try reader.nextVarint("a segment's lowest seq of a device")
                    let span = try reader.nextVarint("a segment's span of seqs of a device")
                    guard low >= 1, low <= ChangeLimits.counter, span <= ChangeLimits.counter - low else {
                        throw CodecError(
                            .invalidValue, "a segment's seqs \(low) + \(span) lie outside 1…\(ChangeLimits.counter)",
                            at: offset)
                    }
                    entries.append((device, low...(low + span)))
                }
                guard reader.isAtEnd else {
                    throw CodecError(
                        .trailingBytes, "\(reader.remaining) bytes follow a segment's seqs", at: reader.offset)
                }
                return .success(entries)
            } catch {
                return .failure(error)
            }
        }
        entries = try decoded.get()
    }

    /// The stored form.
    var encoded: Data {
        var writer = BinaryWriter(capacity: 1 + entries.count * 24)
        writer.write(varint: UInt64(entries.count))
        for entry in entries {
            writer.write(fixed: entry.device.uuid.high)
            writer.write(fixed: entry.device.uuid.low)
            writer.write(varint: entry.seqs.lowerBound)
            writer.write(varint: entry.seqs.upperBound - entry.seqs.lowerBound)
        }
        return Data(writer.bytes)
    }

    /// The seqs of `device`'s changes in the segment, if it holds any.
    func seqs(of device: DeviceID) -> ClosedRange<UInt64>? {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].device < device { low = middle + 1 } else { high = middle }
        }
        return low < entries.count && entries[low].device == device ? entries[low].seqs : nil
    }

    static func == (lhs: SegmentSeqs, rhs: SegmentSeqs) -> Bool {
        lhs.entries.count == rhs.entries.count
            && zip(lhs.entries, rhs.entries).allSatisfy { $0.device == $1.device && $0.seqs == $1.seqs }
    }
}
