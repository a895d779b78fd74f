/// The one stretch where two texts differ, by Unicode scalars: what is left after their common beginning and end.
struct ScalarDifference: Equatable {
    /// Where the stretch starts, in scalars (the length of the common beginning).
    var position: Int
    /// How many scalars of the old text the stretch covers.
    var removed: Int
    /// The new text's scalars in the stretch.
    var inserted: String

    /// The stretch where `old` and `new` differ, `nil` when they are the same scalars.
    ///
    /// - Complexity: O(*n*) in the texts' lengths.
    init?(from old: String, to new: String) {
        let before = Array(old.unicodeScalars)
        let after = Array(new.unicodeScalars)
        var prefix = 0
        let shorter = min(before.count, after.count)
        while prefix < shorter, before[prefix] == after[prefix] { prefix += 1 }
        if prefix == before.count, prefix == after.count { return nil }
        var suffix = 0
        while suffix < shorter - prefix, before[before.count - 1 - suffix] == after[after.count - 1 - suffix] {
            suffix += 1
        }
        position = prefix
        removed = before.count - prefix - suffix
        var text = String.UnicodeScalarView()
        text.append(contentsOf: after[prefix..<(after.count - suffix)])
        inserted = String(text)
    }
}
