extension String {
    /// Orders by Unicode scalar values (the same as by UTF-8 bytes), independent of locale and normalization.
    func precedesByScalars(_ other: String) -> Bool {
        utf8.lexicographicallyPrecedes(other.utf8)
    }

    /// Equal scalar for scalar (the same UTF-8 bytes, as in the file): unlike `==`, "e\u{301}" is not "é".
    func equalsByScalars(_ other: String) -> Bool {
        utf8.elementsEqual(other.utf8)
    }

    /// Whether `part` occurs in the string scalar for scalar, as positions count (UTF-8 cannot match part of a
    /// scalar): unlike `contains`, "e" is in "e\u{301}x", and "é" is not in "e\u{301}".
    func containsByScalars(_ part: String) -> Bool {
        utf8.firstRange(of: part.utf8) != nil
    }

    /// The string's scalars as `U+0065 U+0301`, to tell apart texts that print alike.
    var scalarCodes: String {
        unicodeScalars.map { scalar in
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
        .joined(separator: " ")
    }
}
