import FolioCore

extension Change {
    /// For a resolution, the versions it kept among those it settled: its `chosen` heads that are also its parents,
    /// in ascending order. Empty for any other change, and for a resolution that chose none of its parents.
    ///
    /// A resolution is made on every competing head, so a chosen head that is not a parent is forged or corrupt:
    /// followed, it would show contents from outside the change's past, on the devices that happen to hold them,
    /// and make the document unopenable on the others. It counts for nothing, the same on every device.
    ///
    /// - Complexity: O(chosen + parents).
    public var keptVersions: [ChangeHash] {
        guard case .resolution(let resolution) = kind, !resolution.chosen.isEmpty else { return [] }
        let parents = Set(parents)
        return resolution.chosen.filter { parents.contains($0) }
    }
}
