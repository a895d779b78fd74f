extension String {
    /// Orders by Unicode scalar values (the same as by UTF-8 bytes), which is stable on every platform, unlike
    /// hashing and unlike locale-aware comparison.
    func precedesByScalars(_ other: String) -> Bool {
        utf8.lexicographicallyPrecedes(other.utf8)
    }
}
