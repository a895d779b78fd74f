/// For each device, the highest sequence number seen: a compact name for a set of changes closed under
/// "everything before it from the same device".
///
/// Entries are kept sorted by device with no zero entries, so equal vectors have equal storage and every operation
/// is a single merge walk. Vectors decide concurrency; clocks never do.
public struct VersionVector: Hashable, Sendable {
    /// One device's entry.
    public struct Entry: Hashable, Sendable {
        /// The device.
        public var device: DeviceID
        /// The highest sequence number of that device's changes that the vector includes (at least 1).
        public var seq: UInt64

        /// Creates an entry.
        public init(device: DeviceID, seq: UInt64) {
            self.device = device
            self.seq = seq
        }
    }

    /// The entries, sorted by device, each with `seq >= 1`.
    public private(set) var entries: [Entry]

    /// The empty vector: no change seen.
    public init() {
        entries = []
    }

    /// Creates a vector from `device: seq` pairs in any order; zero entries are dropped.
    ///
    /// - Precondition: no device appears twice.
    public init(_ pairs: some Sequence<(DeviceID, UInt64)>) {
        var entries = pairs.filter { $0.1 > 0 }.map { Entry(device: $0.0, seq: $0.1) }
        entries.sort { $0.device < $1.device }
        for index in entries.indices.dropFirst() {
            precondition(
                entries[index - 1].device != entries[index].device, "device \(entries[index].device) appears twice")
        }
        self.entries = entries
    }

    /// Creates a vector from entries already sorted by device, with no duplicates and no zeros.
    ///
    /// - Returns: `nil` when `entries` break that rule (used by decoders of untrusted input).
    public init?(sortedEntries entries: [Entry]) {
        for index in entries.indices {
            guard entries[index].seq > 0 else { return nil }
            if index > 0, !(entries[index - 1].device < entries[index].device) { return nil }
        }
        self.entries = entries
    }

    /// Whether no change is included.
    public var isEmpty: Bool { entries.isEmpty }

    /// The number of changes the vector includes, or `UInt64.max` when that does not fit in 64 bits (a vector
    /// decoded from outside holds at most 2^20 entries of at most ``ChangeLimits/counter`` each, which can exceed it).
    ///
    /// - Complexity: O(devices).
    public var changeCount: UInt64 {
        var total: UInt64 = 0
        for entry in entries {
            let (sum, overflow) = total.addingReportingOverflow(entry.seq)
            if overflow { return .max }
            total = sum
        }
        return total
    }

    /// The devices with at least one change, in order.
    public var devices: [DeviceID] { entries.map(\.device) }

    /// The highest sequence number included for `device` (0 when none).
    ///
    /// - Complexity: O(log devices).
    public subscript(device: DeviceID) -> UInt64 {
        get {
            let index = position(of: device)
            return index < entries.count && entries[index].device == device ? entries[index].seq : 0
        }
        set {
            let index = position(of: device)
            if index < entries.count && entries[index].device == device {
                if newValue == 0 { entries.remove(at: index) } else { entries[index].seq = newValue }
            } else if newValue > 0 {
                entries.insert(Entry(device: device, seq: newValue), at: index)
            }
        }
    }

    /// Whether the change `id` is among the changes this vector names.
    ///
    /// - Complexity: O(log devices).
    public func contains(_ id: ChangeID) -> Bool {
        self[id.device] >= id.seq
    }

    /// Adds `id` and, implicitly, every earlier change of its device.
    ///
    /// - Complexity: O(devices) in the worst case (a new device), O(log devices) otherwise.
    public mutating func include(_ id: ChangeID) {
        if self[id.device] < id.seq { self[id.device] = id.seq }
    }

    /// Compares causal histories.
    ///
    /// - Complexity: O(devices).
    public func compare(to other: VersionVector) -> CausalOrder {
        var selfHasMore = false
        var otherHasMore = false
        var left = entries.startIndex
        var right = other.entries.startIndex
        while left < entries.endIndex || right < other.entries.endIndex {
            if right == other.entries.endIndex
                || (left < entries.endIndex && entries[left].device < other.entries[right].device)
            {
                selfHasMore = true
                left += 1
            } else if left == entries.endIndex || other.entries[right].device < entries[left].device {
                otherHasMore = true
                right += 1
            } else {
                if entries[left].seq > other.entries[right].seq { selfHasMore = true }
                if entries[left].seq < other.entries[right].seq { otherHasMore = true }
                left += 1
                right += 1
            }
            if selfHasMore && otherHasMore { return .concurrent }
        }
        switch (selfHasMore, otherHasMore) {
        case (false, false): return .equal
        case (true, false): return .after
        case (false, true): return .before
        case (true, true): return .concurrent
        }
    }

    /// Whether every change this vector names is also named by `other`.
    ///
    /// - Complexity: O(devices).
    public func isContained(in other: VersionVector) -> Bool {
        let order = compare(to: other)
        return order == .equal || order == .before
    }

    /// The pointwise maximum: everything either side has seen.
    ///
    /// - Complexity: O(devices).
    public func merging(_ other: VersionVector) -> VersionVector {
        combine(other, keepingMissing: true, pick: max)
    }

    /// Replaces this vector with the pointwise maximum of both.
    ///
    /// - Complexity: O(devices).
    public mutating func merge(_ other: VersionVector) {
        self = merging(other)
    }

    /// The pointwise minimum: the changes both sides have seen (their common causal past).
    ///
    /// - Complexity: O(devices).
    public func intersecting(_ other: VersionVector) -> VersionVector {
        combine(other, keepingMissing: false, pick: min)
    }

    /// The changes this vector names that `other` lacks, as one sequence range per device, in device order.
    ///
    /// This is what a peer at `other` must be sent to catch up.
    ///
    /// - Complexity: O(devices).
    public func changesMissing(from other: VersionVector) -> [(device: DeviceID, seqs: ClosedRange<UInt64>)] {
        var result: [(device: DeviceID, seqs: ClosedRange<UInt64>)] = []
        for entry in entries {
            let known = other[entry.device]
            if known < entry.seq { result.append((entry.device, (known + 1)...entry.seq)) }
        }
        return result
    }

    private func combine(
        _ other: VersionVector, keepingMissing: Bool, pick: (UInt64, UInt64) -> UInt64
    ) -> VersionVector {
        var result: [Entry] = []
        result.reserveCapacity(max(entries.count, other.entries.count))
        var left = entries.startIndex
        var right = other.entries.startIndex
        while left < entries.endIndex || right < other.entries.endIndex {
            if right == other.entries.endIndex
                || (left < entries.endIndex && entries[left].device < other.entries[right].device)
            {
                if keepingMissing { result.append(entries[left]) }
                left += 1
            } else if left == entries.endIndex || other.entries[right].device < entries[left].device {
                if keepingMissing { result.append(other.entries[right]) }
                right += 1
            } else {
                result.append(
                    Entry(device: entries[left].device, seq: pick(entries[left].seq, other.entries[right].seq)))
                left += 1
                right += 1
            }
        }
        return VersionVector(uncheckedSortedEntries: result)
    }

    private init(uncheckedSortedEntries entries: [Entry]) {
        self.entries = entries
    }

    private func position(of device: DeviceID) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].device < device { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

extension VersionVector: CustomStringConvertible {
    /// `[device: seq, …]` with devices in order; `[]` when empty.
    public var description: String {
        "[" + entries.map { "\($0.device): \($0.seq)" }.joined(separator: ", ") + "]"
    }
}

extension VersionVector {
    /// Checks the representation: entries sorted by device, no duplicates, no zero entries.
    ///
    /// Traps on violation; tests call it after every mutation.
    public func checkInvariants() {
        for index in entries.indices {
            precondition(entries[index].seq > 0, "zero entry for \(entries[index].device)")
            if index > 0 {
                precondition(entries[index - 1].device < entries[index].device, "entries out of order at \(index)")
            }
        }
    }
}
