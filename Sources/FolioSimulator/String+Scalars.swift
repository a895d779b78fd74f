extension String {
    /// Orders by Unicode scalar values (the same as by UTF-8 bytes), independent of locale and normalization.
    func precedesByScalars(_ other: String) -> Bool {
        utf8.lexicographicallyPrecedes(other.utf8)
    }
}
