/// Finds the name a person most likely meant when they wrote one that is not known.
enum NameSuggestion {
    /// The candidate closest to `name`, or `nil` when none is close.
    ///
    /// A candidate that differs only in case wins; otherwise the one at the smallest edit distance (insertions,
    /// deletions, substitutions and swaps of neighbours, ignoring case), if that distance is at most a third of the
    /// longer name (at least 1, at most 3); otherwise a candidate that starts with `name` (at least three
    /// characters) or that `name` starts with. Ties go to the earlier candidate, so the answer is deterministic.
    ///
    /// - Complexity: O(candidates × length²).
    static func nearest(to name: String, among candidates: [String]) -> String? {
        let lowered = name.lowercased()
        if let sameLetters = candidates.first(where: { $0.lowercased() == lowered }) {
            return sameLetters
        }
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(Array(lowered), Array(candidate.lowercased()))
            let allowed = min(3, max(1, max(lowered.count, candidate.count) / 3))
            if distance <= allowed, distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        if let best { return best.candidate }
        guard lowered.count >= 3 else { return nil }
        return candidates.first { $0.lowercased().hasPrefix(lowered) || lowered.hasPrefix($0.lowercased()) }
    }

    /// `"did you mean 'x'?"` for the nearest candidate, or a list of every candidate when none is near.
    static func hint(for name: String, among candidates: [String], listing noun: String) -> String {
        if let nearest = nearest(to: name, among: candidates) {
            return "did you mean '\(nearest)'?"
        }
        guard !candidates.isEmpty else { return "there are no \(noun)" }
        return "the \(noun) are " + list(candidates)
    }

    /// `'a'`, `'a' and 'b'`, `'a', 'b' and 'c'`.
    static func list(_ names: [String], conjunction: String = "and") -> String {
        let quoted = names.map { "'\($0)'" }
        guard quoted.count > 1 else { return quoted.first ?? "" }
        return quoted.dropLast().joined(separator: ", ") + " \(conjunction) " + quoted.last!
    }

    /// The optimal string alignment distance between two character sequences.
    private static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousRow: [Int] = []
        var row = Array(0...b.count)
        for i in 1...a.count {
            var next = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                next[j] = min(row[j] + 1, next[j - 1] + 1, row[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    next[j] = min(next[j], previousRow[j - 2] + 1)
                }
            }
            previousRow = row
            row = next
        }
        return row[b.count]
    }
}
