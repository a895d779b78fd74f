/// Elements in one array with a hole (the gap) at the last edit, so an edit near the previous one moves only the
/// few elements in between: the storage behind ``TextStorage``.
///
/// - Complexity: for *n* elements, an edit of *m* of them and a distance *d* from the previous edit: insert
///   O(*m* + *d*) amortized, remove O(*d*), subscript O(1). Memory stays within a constant factor of *n* (the gap
///   doubles on growth and is given back after large deletions).
struct GapBuffer<Element: BitwiseCopyable & Sendable>: Sendable {
    /// The elements before the gap, then the gap (`gapStart..<gapEnd`, unused slots), then the elements after it.
    private var buffer: [Element]
    private var gapStart: Int
    private var gapEnd: Int
    /// What unused slots hold.
    private let filler: Element

    /// The smallest gap a growing buffer gets, so that the first few edits do not each reallocate.
    private static var minimumGap: Int { 64 }

    /// `elements`, with the gap at the end (empty until the first insertion); unused slots hold `filler`.
    init(_ elements: [Element] = [], filler: Element) {
        buffer = elements
        gapStart = elements.count
        gapEnd = elements.count
        self.filler = filler
    }

    private var gapLength: Int { gapEnd - gapStart }

    /// The number of elements.
    var count: Int { buffer.count - gapLength }

    /// The element at `position`, which must lie in `0..<count`.
    subscript(position: Int) -> Element {
        position < gapStart ? buffer[position] : buffer[position + gapLength]
    }

    /// Calls `body` with the elements of `range` (within `0...count`) as the part before the gap and the part after it.
    func withParts<Result>(
        _ range: Range<Int>, _ body: (UnsafeBufferPointer<Element>, UnsafeBufferPointer<Element>) throws -> Result
    ) rethrows -> Result {
        let before = range.clamped(to: 0..<gapStart)
        let after = range.clamped(to: gapStart..<count)
        return try buffer.withUnsafeBufferPointer { elements in
            try body(
                UnsafeBufferPointer(rebasing: elements[before]),
                UnsafeBufferPointer(rebasing: elements[(after.lowerBound + gapLength)..<(after.upperBound + gapLength)])
            )
        }
    }

    /// Inserts `elements` (`length` of them) before `position`, which must lie in `0...count`.
    mutating func insert(_ length: Int, at position: Int, from elements: (UnsafeMutableBufferPointer<Element>) -> Void)
    {
        guard length > 0 else { return }
        reserveGap(length)
        moveGap(to: position)
        buffer.withUnsafeMutableBufferPointer { slots in
            elements(UnsafeMutableBufferPointer(rebasing: slots[gapStart..<(gapStart + length)]))
        }
        gapStart += length
    }

    /// Removes the elements in `range`, which must lie in `0...count`.
    mutating func remove(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        // Grow the gap from whichever of its ends is nearer, so a backspace after typing moves nothing.
        if abs(range.upperBound - gapStart) < abs(range.lowerBound - gapStart) {
            moveGap(to: range.upperBound)
            gapStart = range.lowerBound
        } else {
            moveGap(to: range.lowerBound)
            gapEnd += range.count
        }
        releaseSpareCapacityIfLarge()
    }

    private mutating func reserveGap(_ needed: Int) {
        guard gapLength < needed else { return }
        resize(gap: Swift.max(needed, count, Self.minimumGap))
    }

    /// After large deletions the gap may dwarf the elements; rebuild with room for as many again, so memory stays
    /// proportional to the count and the doubling policy above still amortizes.
    private mutating func releaseSpareCapacityIfLarge() {
        guard buffer.count > 4 * Self.minimumGap, gapLength > 3 * count else { return }
        resize(gap: Swift.max(count, Self.minimumGap))
    }

    private mutating func resize(gap newGap: Int) {
        var resized: [Element] = []
        resized.reserveCapacity(count + newGap)
        resized.append(contentsOf: buffer[0..<gapStart])
        resized.append(contentsOf: repeatElement(filler, count: newGap))
        resized.append(contentsOf: buffer[gapEnd...])
        buffer = resized
        gapEnd = gapStart + newGap
    }

    private mutating func moveGap(to position: Int) {
        guard position != gapStart else { return }
        let length = gapLength
        let start = gapStart
        buffer.withUnsafeMutableBufferPointer { elements in
            let base = UnsafeMutableRawPointer(elements.baseAddress!)
            let stride = MemoryLayout<Element>.stride
            if position < start {
                // Elements position..<start move to the far side of the gap.
                let moved = start - position
                (base + (position + length) * stride).copyMemory(
                    from: base + position * stride, byteCount: moved * stride)
            } else {
                // Elements just after the gap move to its near side.
                let moved = position - start
                (base + start * stride).copyMemory(from: base + (start + length) * stride, byteCount: moved * stride)
            }
        }
        gapStart = position
        gapEnd = position + length
    }

    /// Traps when the bookkeeping is inconsistent; for tests.
    func _checkInvariants() {
        precondition(
            0 <= gapStart && gapStart <= gapEnd && gapEnd <= buffer.count,
            "gap \(gapStart)..<\(gapEnd) outside the buffer")
        precondition(count == buffer.count - gapLength, "count disagrees with the buffer")
    }
}
