// segment-seqs: a segment's seqs as a store file keeps them (`SegmentSeqs(decoding:)`), on untrusted bytes.
// Oracles: decoding never traps; seqs that decode re-encode to the same bytes, name each device once in ascending
// order with seqs within the change counter, and answer `seqs(of:)` for each of their devices and no other.
import FolioCore
import Foundation

@testable import FolioStore

enum Harness {
    static func run(_ input: UnsafeRawBufferPointer) {
        let bytes = Data(input)
        guard let seqs = try? SegmentSeqs(decoding: bytes) else { return }
        require(seqs.encoded == bytes, "decoded seqs re-encode to other bytes")
        var previous: DeviceID?
        for entry in seqs.entries {
            if let previous { require(previous < entry.device, "seqs name a device twice or out of order") }
            previous = entry.device
            require(
                entry.seqs.lowerBound >= 1 && entry.seqs.upperBound <= ChangeLimits.counter,
                "seqs outside the change counter decoded")
            require(seqs.seqs(of: entry.device) == entry.seqs, "seqs(of:) misses a device's seqs")
        }
        let absent = FuzzIDs.device(99)
        if !seqs.entries.contains(where: { $0.device == absent }) {
            require(seqs.seqs(of: absent) == nil, "seqs(of:) answers for a device the seqs do not name")
        }
    }

    static func seeds() -> [[UInt8]] {
        let history = SampleChanges.history(of: FuzzIDs.document(7))
        // The seqs of the whole sample history, of each device's changes alone, and of single changes.
        var seeds = [Array(SegmentSeqs(history).encoded)]
        for device in Set(history.map(\.id.device)).sorted() {
            seeds.append(Array(SegmentSeqs(history.filter { $0.id.device == device }).encoded))
        }
        seeds.append(Array(SegmentSeqs(history.prefix(1)).encoded))
        return seeds
    }
}
