import FolioCore
import HeapModule

/// The state of one walk from signed heads (see ``Ingestion/vouch(with:for:into:)``): the changes reached, each with
/// the devices whose heads reach it, and which to visit next (the highest lamport timestamp first).
///
/// The devices that can reach a change are those with heads in the call, known before the walk starts; each is a bit
/// of a ``DeviceMask``, so that carrying a set of them from a change to its parents allocates and hashes nothing.
struct VouchingWalk {
    struct Node {
        var change: Change
        /// Whether the change waits in the pending table (not among the incoming ones), and was vouched for then.
        var isWaiting: Bool
        var wasVouched: Bool
        /// The devices (bits of ``VouchingWalk/devices``) whose heads reach it.
        var reachers = DeviceMask()
        var visited = false
    }

    /// A node waiting to be visited: the highest lamport timestamp first, then the highest hash.
    private struct Entry: Comparable {
        var lamport: UInt64
        var hash: ChangeHash
        var index: Int

        static func < (lhs: Entry, rhs: Entry) -> Bool { (lhs.lamport, lhs.hash) < (rhs.lamport, rhs.hash) }
        static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.lamport == rhs.lamport && lhs.hash == rhs.hash }
    }

    /// The devices whose heads may reach changes, in identity order: device `devices[i]` is bit `i`.
    let devices: [DeviceID]
    private let bits: [DeviceID: Int]
    private var nodes: [Node] = []
    private var indices: [ChangeHash: Int] = [:]
    /// Hashes looked up and found nowhere (in the log, or not arrived).
    private var absent: Set<ChangeHash> = []
    private var queue = Heap<Entry>()
    private var budget: Int
    /// The devices whose heads reached any change.
    private var reached = DeviceMask()

    init(devices: [DeviceID], budget: Int) {
        self.devices = devices
        bits = Dictionary(uniqueKeysWithValues: devices.enumerated().map { ($0.element, $0.offset) })
        self.budget = budget
    }

    var hasWork: Bool { !queue.isEmpty }

    /// The bit of `device`, if its heads may reach changes.
    func bit(of device: DeviceID) -> Int? { bits[device] }

    /// The devices whose heads reached any change, in identity order.
    var reachingDevices: [DeviceID] {
        reached.map { devices[$0] }
    }

    /// The node at `index` (as ``node(_:byHash:waiting:)`` returned it).
    subscript(index: Int) -> Node { nodes[index] }

    /// The index of the node for `hash`: an incoming change, or a waiting one (read once through `waiting`); `nil` if
    /// it is neither.
    mutating func node(
        _ hash: ChangeHash, byHash: [ChangeHash: Change],
        waiting: (ChangeHash) throws -> (change: Change, vouched: Bool)?
    ) throws -> Int? {
        if let index = indices[hash] { return index }
        if absent.contains(hash) { return nil }
        let node: Node
        if let change = byHash[hash] {
            node = Node(change: change, isWaiting: false, wasVouched: false)
        } else if let found = try waiting(hash) {
            node = Node(change: found.change, isWaiting: true, wasVouched: found.vouched)
        } else {
            absent.insert(hash)
            return nil
        }
        nodes.append(node)
        indices[hash] = nodes.count - 1
        return nodes.count - 1
    }

    /// Notes that the heads of `reachers` reach the node at `index`.
    mutating func reach(_ index: Int, by reachers: DeviceMask) {
        guard !nodes[index].visited else { return }
        let wasReached = !nodes[index].reachers.isEmpty
        nodes[index].reachers.formUnion(reachers)
        reached.formUnion(reachers)
        if !wasReached {
            queue.insert(Entry(lamport: nodes[index].change.lamport, hash: nodes[index].change.hash, index: index))
        }
    }

    /// The index of the reached node with the highest lamport timestamp not yet visited; `nil` when none is left or
    /// the budget is spent.
    mutating func next() -> Int? {
        guard budget > 0, let top = queue.popMax() else { return nil }
        budget -= 1
        nodes[top.index].visited = true
        return top.index
    }
}

/// A set of small non-negative integers (the bits of a ``VouchingWalk``'s devices): the first 64 in one word, the rest,
/// rarely any, in an array.
struct DeviceMask: Equatable, Sequence {
    private var low: UInt64 = 0
    private var high: [UInt64] = []

    init() {}

    /// The set of one bit.
    init(_ bit: Int) {
        insert(bit)
    }

    var isEmpty: Bool { low == 0 && high.allSatisfy { $0 == 0 } }

    func contains(_ bit: Int) -> Bool {
        if bit < 64 { return low & (1 << UInt64(bit)) != 0 }
        let word = bit / 64 - 1
        return word < high.count && high[word] & (1 << UInt64(bit % 64)) != 0
    }

    mutating func insert(_ bit: Int) {
        if bit < 64 {
            low |= 1 << UInt64(bit)
            return
        }
        let word = bit / 64 - 1
        if word >= high.count { high.append(contentsOf: repeatElement(0, count: word + 1 - high.count)) }
        high[word] |= 1 << UInt64(bit % 64)
    }

    mutating func remove(_ bit: Int) {
        if bit < 64 {
            low &= ~(1 << UInt64(bit))
        } else if bit / 64 - 1 < high.count {
            high[bit / 64 - 1] &= ~(1 << UInt64(bit % 64))
        }
    }

    mutating func formUnion(_ other: DeviceMask) {
        low |= other.low
        guard !other.high.isEmpty else { return }
        if other.high.count > high.count {
            high.append(contentsOf: repeatElement(0, count: other.high.count - high.count))
        }
        for word in other.high.indices { high[word] |= other.high[word] }
    }

    /// The bits for which `isIncluded` holds.
    func keeping(_ isIncluded: (Int) throws -> Bool) rethrows -> DeviceMask {
        var result = DeviceMask()
        for bit in self where try isIncluded(bit) { result.insert(bit) }
        return result
    }

    /// The bits in increasing order.
    struct Iterator: IteratorProtocol {
        let mask: DeviceMask
        /// The word being read (0 is `low`, `n` is `high[n - 1]`) and its bits not yet returned.
        var word = 0
        var rest: UInt64

        mutating func next() -> Int? {
            while rest == 0 {
                word += 1
                guard word <= mask.high.count else { return nil }
                rest = mask.high[word - 1]
            }
            let bit = rest.trailingZeroBitCount
            rest &= rest - 1
            return word * 64 + bit
        }
    }

    func makeIterator() -> Iterator { Iterator(mask: self, rest: low) }
}
