extension String {
    /// Whether both strings hold the same Unicode scalars.
    ///
    /// `==` on `String` compares by canonical equivalence (`"é" == "e\u{301}"`), but the models' snapshots and
    /// positions see scalars, so their equality must too.
    func isIdentical(to other: String) -> Bool {
        utf8.elementsEqual(other.utf8)
    }

    /// Orders by Unicode scalar values (the same as by UTF-8 bytes): the order of keys in the models' JSON.
    func precedesByScalars(_ other: String) -> Bool {
        utf8.lexicographicallyPrecedes(other.utf8)
    }
}

extension Dictionary where Key == String, Value == String {
    /// Whether both hold the same keys, spelled with the same scalars, with identical values.
    func isIdentical(to other: [String: String]) -> Bool {
        guard count == other.count else { return false }
        let mine = sortedByScalars
        let theirs = other.sortedByScalars
        return zip(mine, theirs).allSatisfy { $0.key.isIdentical(to: $1.key) && $0.value.isIdentical(to: $1.value) }
    }

    /// The entries in key order by scalars.
    var sortedByScalars: [(key: String, value: String)] {
        sorted { $0.key.precedesByScalars($1.key) }
    }
}
