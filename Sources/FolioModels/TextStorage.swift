/// Text as a gap buffer of Unicode scalars: the scalars sit in one array with a hole (the gap) at the last edit, so
/// an edit near the previous one moves only the few scalars in between.
///
/// Editing histories are local (people type, backspace and fix typos close to where they just were), so almost every
/// edit costs a handful of scalar moves; a jump across the text costs one `memmove` of the scalars jumped over.
/// Positions count Unicode scalars, which is what ``TextDocument`` positions mean, and indexing is O(1).
///
/// Costs, for a text of *n* scalars, an edit of *m* scalars and a distance *d* from the previous edit's position:
/// insert O(*m* + *d*) amortized; remove O(*m* + *d*); `count` and subscript O(1); `string` O(*n*); equality and
/// hashing O(*n*). Memory stays within a constant factor of *n* (the gap doubles on growth and is given back after
/// large deletions). Replaying the automerge-paper trace (259,778 edits) takes about 15 ms in a release build.
///
/// Equality and hashing look at the scalars only, never at where the gap happens to be, and compare scalar by scalar
/// (not by canonical equivalence as `String` does): `"é"` and `"e\u{301}"` are different texts here.
public struct TextStorage: Sendable {
    /// The scalars before the gap, then the gap (`gapStart..<gapEnd`, unused slots), then the scalars after it.
    private var buffer: [Unicode.Scalar]
    private var gapStart: Int
    private var gapEnd: Int

    /// The smallest gap a growing buffer gets, so that the first few edits do not each reallocate.
    private static let minimumGap = 64

    /// Empty text.
    public init() {
        buffer = []
        gapStart = 0
        gapEnd = 0
    }

    /// The scalars of `text`.
    ///
    /// - Complexity: O(*m*), where *m* is the length of `text`.
    public init(_ text: String) {
        buffer = Array(text.unicodeScalars)
        gapStart = buffer.count
        gapEnd = buffer.count
    }

    private var gapLength: Int { gapEnd - gapStart }

    /// The text as a `String`.
    ///
    /// - Complexity: O(*n*).
    public var string: String { string(in: 0..<count) }

    /// The scalars in `range` as a `String`.
    ///
    /// - Precondition: `range` lies within `0...count`.
    /// - Complexity: O(*k*), where *k* is the length of `range`.
    public func string(in range: Range<Int>) -> String {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range \(range) is outside 0...\(count)")
        guard !range.isEmpty else { return "" }
        let before = range.clamped(to: 0..<gapStart)
        let after = range.clamped(to: gapStart..<count)
        let gap = gapLength
        // Encoding UTF-8 straight into the string's storage; appending scalars to a `UnicodeScalarView` was the
        // largest cost of replaying a deletion-heavy history.
        return buffer.withUnsafeBufferPointer { scalars in
            String(unsafeUninitializedCapacity: range.count * 4) { utf8 in
                var written = 0
                for index in before {
                    written = Self.encode(scalars[index], into: utf8, at: written)
                }
                for index in (after.lowerBound + gap)..<(after.upperBound + gap) {
                    written = Self.encode(scalars[index], into: utf8, at: written)
                }
                return written
            }
        }
    }

    /// Writes the UTF-8 form of `scalar` at `offset` and returns the offset after it.
    private static func encode(_ scalar: Unicode.Scalar, into utf8: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        let value = scalar.value
        switch value {
        case 0..<0x80:
            utf8[offset] = UInt8(value)
            return offset + 1
        case 0x80..<0x800:
            utf8[offset] = UInt8(0xC0 | value >> 6)
            utf8[offset + 1] = UInt8(0x80 | value & 0x3F)
            return offset + 2
        case 0x800..<0x10000:
            utf8[offset] = UInt8(0xE0 | value >> 12)
            utf8[offset + 1] = UInt8(0x80 | value >> 6 & 0x3F)
            utf8[offset + 2] = UInt8(0x80 | value & 0x3F)
            return offset + 3
        default:
            utf8[offset] = UInt8(0xF0 | value >> 18)
            utf8[offset + 1] = UInt8(0x80 | value >> 12 & 0x3F)
            utf8[offset + 2] = UInt8(0x80 | value >> 6 & 0x3F)
            utf8[offset + 3] = UInt8(0x80 | value & 0x3F)
            return offset + 4
        }
    }

    /// Inserts the scalars of `text` before position `position`, and returns how many were inserted.
    ///
    /// - Precondition: `0 <= position <= count`.
    /// - Complexity: O(*m* + *d*) amortized, where *m* is the length of `text` and *d* the distance from the previous
    ///   edit (the buffer doubles when the gap is too small).
    @discardableResult
    public mutating func insert(_ text: String, at position: Int) -> Int {
        precondition(position >= 0 && position <= count, "position \(position) is outside 0...\(count)")
        let scalars = text.unicodeScalars
        let length = scalars.count
        guard length > 0 else { return 0 }
        reserveGap(length)
        moveGap(to: position)
        var index = gapStart
        for scalar in scalars {
            buffer[index] = scalar
            index += 1
        }
        gapStart += length
        return length
    }

    /// Removes the scalars in `range` and returns them.
    ///
    /// - Precondition: `range` lies within `0...count`.
    /// - Complexity: O(*k* + *d*), where *k* is the length of `range` and *d* the distance from the previous edit.
    @discardableResult
    public mutating func remove(_ range: Range<Int>) -> String {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range \(range) is outside 0...\(count)")
        guard !range.isEmpty else { return "" }
        let removed = string(in: range)
        // Grow the gap from whichever of its ends is nearer, so a backspace after typing moves nothing.
        if abs(range.upperBound - gapStart) < abs(range.lowerBound - gapStart) {
            moveGap(to: range.upperBound)
            gapStart = range.lowerBound
        } else {
            moveGap(to: range.lowerBound)
            gapEnd += range.count
        }
        releaseSpareCapacityIfLarge()
        return removed
    }

    /// Replaces the whole text.
    ///
    /// - Complexity: O(*n* + *m*).
    public mutating func replaceAll(with text: String) {
        self = TextStorage(text)
    }

    private mutating func reserveGap(_ needed: Int) {
        guard gapLength < needed else { return }
        let newGap = Swift.max(needed, count, Self.minimumGap)
        var grown: [Unicode.Scalar] = []
        grown.reserveCapacity(count + newGap)
        grown.append(contentsOf: buffer[0..<gapStart])
        grown.append(contentsOf: repeatElement("\0", count: newGap))
        grown.append(contentsOf: buffer[gapEnd...])
        buffer = grown
        gapEnd = gapStart + newGap
    }

    /// After large deletions the gap may dwarf the text; rebuild with room for as much again, so memory stays
    /// proportional to the text and the doubling policy above still amortizes.
    private mutating func releaseSpareCapacityIfLarge() {
        guard buffer.count > 4 * Self.minimumGap, gapLength > 3 * count else { return }
        let newGap = Swift.max(count, Self.minimumGap)
        var shrunk: [Unicode.Scalar] = []
        shrunk.reserveCapacity(count + newGap)
        shrunk.append(contentsOf: buffer[0..<gapStart])
        shrunk.append(contentsOf: repeatElement("\0", count: newGap))
        shrunk.append(contentsOf: buffer[gapEnd...])
        buffer = shrunk
        gapEnd = gapStart + newGap
    }

    private mutating func moveGap(to position: Int) {
        guard position != gapStart else { return }
        let length = gapLength
        let start = gapStart
        buffer.withUnsafeMutableBufferPointer { scalars in
            let base = UnsafeMutableRawPointer(scalars.baseAddress!)
            let stride = MemoryLayout<Unicode.Scalar>.stride
            if position < start {
                // Scalars position..<start move to the far side of the gap.
                let moved = start - position
                (base + (position + length) * stride).copyMemory(from: base + position * stride, byteCount: moved * stride)
            } else {
                // Scalars just after the gap move to its near side.
                let moved = position - start
                (base + start * stride).copyMemory(from: base + (start + length) * stride, byteCount: moved * stride)
            }
        }
        gapStart = position
        gapEnd = position + length
    }

    /// Traps when the buffer's bookkeeping is inconsistent; for tests.
    public func _checkInvariants() {
        precondition(0 <= gapStart && gapStart <= gapEnd && gapEnd <= buffer.count, "gap \(gapStart)..<\(gapEnd) outside the buffer")
        precondition(count == buffer.count - gapLength, "count disagrees with the buffer")
    }
}

extension TextStorage: RandomAccessCollection {
    /// The position of the first scalar.
    public var startIndex: Int { 0 }

    /// One past the last scalar: the number of scalars.
    public var endIndex: Int { buffer.count - gapLength }

    /// The number of scalars.
    ///
    /// - Complexity: O(1).
    public var count: Int { buffer.count - gapLength }

    /// The scalar at `position`.
    ///
    /// - Complexity: O(1).
    public subscript(position: Int) -> Unicode.Scalar {
        precondition(position >= 0 && position < count, "position \(position) is outside 0..<\(count)")
        return position < gapStart ? buffer[position] : buffer[position + gapLength]
    }
}

extension TextStorage: Hashable {
    /// Whether both hold the same scalars, wherever their gaps are.
    ///
    /// - Complexity: O(*n*).
    public static func == (lhs: TextStorage, rhs: TextStorage) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }

    /// Hashes the scalars.
    ///
    /// - Complexity: O(*n*).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for scalar in self { hasher.combine(scalar.value) }
    }
}
