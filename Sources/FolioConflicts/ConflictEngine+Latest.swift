import FolioCore

extension ConflictEngine {
    /// The version written last: the one whose contents were last made (by wall time, then lamport, then device).
    ///
    /// A resolution that kept a version, or a rename, does not make its version newer: the version is as old as
    /// the change that made its contents. Otherwise the devices that resolve one conflict at once, each from what
    /// it has received so far, would each make their own choice the latest, and keep choosing again forever.
    ///
    /// - Precondition: the engine has observed heads.
    /// - Throws: `History.Failure`, what reading `history` throws.
    public func latestVersion<History: ConflictHistory<Model>>(in history: History) throws(History.Failure)
        -> HeadGroup<Model>
    {
        precondition(!versions.isEmpty, "no heads observed")
        var best: (group: HeadGroup<Model>, origin: Change)?
        for group in versions {
            let origin = try Self.origin(of: group, in: history)
            if best == nil || Self.isLater(origin, than: best!.origin) { best = (group, origin) }
        }
        return best!.group
    }

    /// The change that made a version's contents (the latest, when its heads reached the same state apart).
    ///
    /// - Throws: `History.Failure`, what reading `history` throws.
    public static func origin<History: ConflictHistory<Model>>(
        of group: HeadGroup<Model>, in history: History
    ) throws(History.Failure) -> Change {
        var origin = try contentOrigin(of: group.heads[0], in: history)
        for head in group.heads.dropFirst() {
            let other = try contentOrigin(of: head, in: history)
            if isLater(other, than: origin) { origin = other }
        }
        return origin
    }

    static func isLater(_ change: Change, than other: Change) -> Bool {
        (change.wallTime, change.lamport, change.id.device) > (other.wallTime, other.lamport, other.id.device)
    }

    /// The change that made the contents `change` shows: down the chosen versions of resolutions that only kept
    /// one, and the parents of renames and moves. A change missing from the history ends the walk. A merge computed
    /// from the change graph (`Change.mergesCharacters(of:)`) stores no contents but made them: it is its own origin.
    private static func contentOrigin<History: ConflictHistory<Model>>(
        of change: Change, in history: History
    ) throws(History.Failure) -> Change {
        var current = change
        while true {
            let next: ChangeHash?
            switch current.kind {
            case .resolution(let resolution) where resolution.contents == nil:
                next = current.mergesCharacters(of: Model.self) ? nil : current.keptVersions.first
            case .lifecycle: next = current.parents.first
            default: next = nil
            }
            guard let next, let found = try history.change(next) else { return current }
            current = found
        }
    }
}
