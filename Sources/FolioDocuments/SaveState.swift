/// What an open document has not yet written: the changes since its file was last saved and since its last
/// checkpoint, and whether the next save must rewrite every byte. A value the document owns.
struct SaveState: Equatable {
    /// Changes committed since the last save.
    var unsavedChanges = 0
    /// Changes since the last checkpoint, so that one is taken before the tail grows long.
    var changesSinceCheckpoint: Int
    /// Set by a failed save: the next save rewrites every byte from the log instead of trusting what is on disk.
    var needsFullRewrite = false

    /// The state of a document opened `tail` changes past its latest checkpoint.
    init(changesSinceCheckpoint tail: Int) {
        changesSinceCheckpoint = tail
    }

    /// Counts a change the document made or took on (it is unsaved, and not in a checkpoint).
    mutating func noteChange() {
        unsavedChanges += 1
        changesSinceCheckpoint += 1
    }

    /// Counts a change toward the next checkpoint only: one a live sync committed from a group already counted as
    /// unsaved (an app counts one unsaved change a group).
    mutating func noteChangeOfCountedGroup() {
        changesSinceCheckpoint += 1
    }

    /// Whether a checkpoint is due: on `force` (a close) when anything changed, otherwise after `interval` changes.
    func checkpointIsDue(force: Bool, interval: Int) -> Bool {
        changesSinceCheckpoint > 0 && (force || changesSinceCheckpoint >= interval)
    }
}
