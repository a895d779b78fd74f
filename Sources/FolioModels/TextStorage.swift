import FolioCore

/// Text as a gap buffer of Unicode scalars: the scalars sit in one array with a hole (the gap) at the last edit, so
/// an edit near the previous one moves only the few scalars in between.
///
/// Editing histories are local (people type, backspace and fix typos close to where they just were), so almost every
/// edit costs a handful of scalar moves; a jump across the text costs one `memmove` of the scalars jumped over.
/// Positions count Unicode scalars, which is what ``TextDocument`` positions mean, and indexing is O(1).
///
/// ASCII text, the usual case, is kept one byte per scalar, which is its UTF-8 as well: its edits move a quarter of
/// the bytes, and it becomes a `String` (a snapshot, a hash, a merge) or comes from one by a copy. The first
/// non-ASCII scalar widens the storage to a `Unicode.Scalar` per scalar for good.
///
/// Costs, for a text of *n* scalars, an edit of *m* scalars and a distance *d* from the previous edit's position:
/// insert O(*m* + *d*) amortized; remove O(*m* + *d*); `count` and subscript O(1); `string` O(*n*); equality and
/// hashing O(*n*); widening O(*n*), once. Memory stays within a constant factor of *n* (the gap doubles on growth and
/// is given back after large deletions). Replaying the automerge-paper trace (259,778 edits) takes about 15 ms in a
/// release build.
///
/// Equality and hashing look at the scalars only, never at where the gap happens to be or how they are kept, and
/// compare scalar by scalar (not by canonical equivalence as `String` does): `"é"` and `"e\u{301}"` are different
/// texts here.
public struct TextStorage: Sendable {
    /// The text while it is all ASCII: one byte per scalar.
    private var narrow = GapBuffer<UInt8>(filler: 0)
    /// The text once it holds a non-ASCII scalar (`narrow` is empty then).
    private var wide = GapBuffer<Unicode.Scalar>(filler: "\0")
    private var isWide = false

    /// Empty text.
    public init() {}

    /// The scalars of `text`.
    ///
    /// - Complexity: O(*m*), where *m* is the length of `text`.
    public init(_ text: String) {
        if let ascii = Self.asciiBytes(of: text) {
            narrow = GapBuffer(ascii, filler: 0)
        } else {
            wide = GapBuffer(Self.scalars(of: text), filler: "\0")
            isWide = true
        }
    }

    /// The UTF-8 of `text` when it is all ASCII.
    private static func asciiBytes(of text: String) -> [UInt8]? {
        let bytes = text.utf8.withContiguousStorageIfAvailable { utf8 in Self.isASCII(utf8) ? Array(utf8) : nil }
        if let bytes { return bytes }
        let copied = Array(text.utf8)
        return copied.withUnsafeBufferPointer(Self.isASCII) ? copied : nil
    }

    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // Eight bytes at a time: an ASCII byte has its high bit clear.
        let raw = UnsafeRawBufferPointer(bytes)
        var offset = 0
        while offset + 8 <= raw.count {
            guard raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 else {
                return false
            }
            offset += 8
        }
        while offset < raw.count {
            guard raw[offset] < 0x80 else { return false }
            offset += 1
        }
        return true
    }

    /// The scalars of `text`, decoded straight from its UTF-8: copying the `unicodeScalars` view scalar by scalar
    /// was the largest cost of loading a long text (a checkpoint, a merge's result).
    private static func scalars(of text: String) -> [Unicode.Scalar] {
        let decoded: [Unicode.Scalar]? = text.utf8.withContiguousStorageIfAvailable { utf8 in
            // A String's UTF-8 is valid, so each lead byte says how many continuation bytes follow.
            [Unicode.Scalar](unsafeUninitializedCapacity: utf8.count) { scalars, written in
                var index = 0
                var count = 0
                let end = utf8.count
                while index < end {
                    let lead = UInt32(utf8[index])
                    let value: UInt32
                    if lead < 0x80 {
                        value = lead
                        index += 1
                    } else if lead < 0xE0 {
                        value = (lead & 0x1F) << 6 | UInt32(utf8[index + 1] & 0x3F)
                        index += 2
                    } else if lead < 0xF0 {
                        value =
                            (lead & 0x0F) << 12 | UInt32(utf8[index + 1] & 0x3F) << 6 | UInt32(utf8[index + 2] & 0x3F)
                        index += 3
                    } else {
                        value =
                            (lead & 0x07) << 18 | UInt32(utf8[index + 1] & 0x3F) << 12
                            | UInt32(utf8[index + 2] & 0x3F) << 6 | UInt32(utf8[index + 3] & 0x3F)
                        index += 4
                    }
                    (scalars.baseAddress! + count).initialize(to: Unicode.Scalar(value) ?? "\u{FFFD}")
                    count += 1
                }
                written = count
            }
        }
        return decoded ?? Array(text.unicodeScalars)
    }

    /// The text as a `String`.
    ///
    /// - Complexity: O(*n*).
    public var string: String { string(in: 0..<count) }

    /// The text's scalars, in order.
    ///
    /// - Complexity: O(*n*), a copy (ASCII bytes widened one by one), no decoding.
    public var scalars: [Unicode.Scalar] {
        guard isWide else {
            return narrow.withParts(0..<count) { before, after in
                var result: [Unicode.Scalar] = []
                result.reserveCapacity(before.count + after.count)
                for byte in before { result.append(Unicode.Scalar(byte)) }
                for byte in after { result.append(Unicode.Scalar(byte)) }
                return result
            }
        }
        return wide.withParts(0..<count) { before, after in Array(before) + Array(after) }
    }

    /// The scalars in `range` as a `String`.
    ///
    /// - Precondition: `range` lies within `0...count`.
    /// - Complexity: O(*k*), where *k* is the length of `range`.
    public func string(in range: Range<Int>) -> String {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range \(range) is outside 0...\(count)")
        guard !range.isEmpty else { return "" }
        guard isWide else {
            // ASCII bytes are their own UTF-8.
            return narrow.withParts(range) { before, after in
                String(unsafeUninitializedCapacity: range.count) { utf8 in
                    _ = utf8.initialize(fromContentsOf: before)
                    _ = UnsafeMutableBufferPointer(rebasing: utf8[before.count...]).initialize(fromContentsOf: after)
                    return range.count
                }
            }
        }
        // Encoding UTF-8 straight into the string's storage; appending scalars to a `UnicodeScalarView` was the
        // largest cost of replaying a deletion-heavy history.
        return wide.withParts(range) { before, after in
            String(unsafeUninitializedCapacity: range.count * 4) { utf8 in
                var written = 0
                for scalar in before { written = Self.encode(scalar, into: utf8, at: written) }
                for scalar in after { written = Self.encode(scalar, into: utf8, at: written) }
                return written
            }
        }
    }

    /// Writes the UTF-8 form of `scalar` at `offset` and returns the offset after it.
    private static func encode(_ scalar: Unicode.Scalar, into utf8: UnsafeMutableBufferPointer<UInt8>, at offset: Int)
        -> Int
    {
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
    ///   edit (the buffer doubles when the gap is too small); O(*n*) more when it widens the storage.
    @discardableResult
    public mutating func insert(_ text: String, at position: Int) -> Int {
        precondition(position >= 0 && position <= count, "position \(position) is outside 0...\(count)")
        if !isWide {
            let ascii =
                text.utf8.withContiguousStorageIfAvailable(Self.isASCII) ?? text.unicodeScalars.allSatisfy(\.isASCII)
            if ascii {
                let length = text.utf8.count
                narrow.insert(length, at: position) { _ = $0.initialize(fromContentsOf: text.utf8) }
                return length
            }
            widen()
        }
        let scalars = Self.scalars(of: text)
        wide.insert(scalars.count, at: position) { _ = $0.initialize(fromContentsOf: scalars) }
        return scalars.count
    }

    /// Moves ASCII text into the wide storage, for a non-ASCII scalar to join it.
    private mutating func widen() {
        let scalars = narrow.withParts(0..<narrow.count) { before, after in
            [Unicode.Scalar](unsafeUninitializedCapacity: before.count + after.count) { scalars, written in
                for (index, byte) in before.enumerated() {
                    (scalars.baseAddress! + index).initialize(to: Unicode.Scalar(byte))
                }
                for (index, byte) in after.enumerated() {
                    (scalars.baseAddress! + before.count + index).initialize(to: Unicode.Scalar(byte))
                }
                written = before.count + after.count
            }
        }
        wide = GapBuffer(scalars, filler: "\0")
        narrow = GapBuffer(filler: 0)
        isWide = true
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
        if isWide { wide.remove(range) } else { narrow.remove(range) }
        return removed
    }

    /// Removes the scalars in `range`, without reading them.
    ///
    /// - Precondition: `range` lies within `0...count`.
    /// - Complexity: O(*d*), where *d* is the distance from the previous edit.
    mutating func discard(_ range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range \(range) is outside 0...\(count)")
        guard !range.isEmpty else { return }
        if isWide { wide.remove(range) } else { narrow.remove(range) }
    }

    /// Replaces the whole text.
    ///
    /// - Complexity: O(*n* + *m*).
    public mutating func replaceAll(with text: String) {
        self = TextStorage(text)
    }

    /// Traps when the buffer's bookkeeping is inconsistent; for tests.
    public func _checkInvariants() {
        narrow._checkInvariants()
        wide._checkInvariants()
        precondition(isWide ? narrow.count == 0 : wide.count == 0, "text in both storages")
        if !isWide {
            precondition((0..<narrow.count).allSatisfy { narrow[$0] < 0x80 }, "a non-ASCII byte in the narrow storage")
        }
    }
}

extension TextStorage: RandomAccessCollection {
    /// The position of the first scalar.
    public var startIndex: Int { 0 }

    /// One past the last scalar: the number of scalars.
    public var endIndex: Int { count }

    /// The number of scalars.
    ///
    /// - Complexity: O(1).
    public var count: Int { isWide ? wide.count : narrow.count }

    /// The scalar at `position`.
    ///
    /// - Complexity: O(1).
    public subscript(position: Int) -> Unicode.Scalar {
        precondition(position >= 0 && position < count, "position \(position) is outside 0..<\(count)")
        return isWide ? wide[position] : Unicode.Scalar(narrow[position])
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

extension TextStorage {
    /// Inserts `text` at scalar `position`, as the text models apply an insertion: returns how many scalars were
    /// inserted.
    ///
    /// - Throws: `ModelError` `invalidOperation` when `position` is negative or past the end; nothing changed.
    mutating func insertChecked(_ text: String, at position: Int) throws(ModelError) -> Int {
        guard position >= 0 && position <= count else {
            throw ModelError(.invalidOperation, "cannot insert at \(position): the text has \(count) scalars")
        }
        return insert(text, at: position)
    }

    /// Removes `count` scalars at scalar `position`, as the text models apply a deletion: returns the text removed.
    ///
    /// - Throws: `ModelError` `invalidOperation` when the range is negative or past the end; nothing changed.
    mutating func removeChecked(_ count: Int, at position: Int) throws(ModelError) -> String {
        let length = self.count
        guard position >= 0, count >= 0, position <= length, count <= length - position else {
            throw ModelError(
                .invalidOperation, "cannot delete \(count) scalars at \(position): the text has \(length) scalars")
        }
        return remove(position..<(position + count))
    }
}
