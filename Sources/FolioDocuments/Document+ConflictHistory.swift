import FolioConflicts
import FolioCore
import FolioStore

extension Document {
    /// Every conflict the log records as settled, oldest first: for each resolution change, the versions it
    /// settled (its parents' states, grouped by equal state as ``versions()`` groups heads), their common
    /// ancestor, and the resolution itself (`ConflictEngine.conflictHistory(settledBy:in:devices:)`).
    /// Reads the log only; nothing is appended.
    ///
    /// - Complexity: a replay per parent of each resolution, and one for each common ancestor.
    /// - Throws: ``DocumentError`` `.store` when the log cannot be read, `.invalidContents` when it holds contents
    ///   the model refuses.
    public func conflictHistory() throws(DocumentError) -> [ConflictRecord<Model>] {
        try ConflictEngine<Model>.conflictHistory(
            settledBy: resolutionChanges(), in: storedHistory, devices: try knownDevices())
    }

    /// The conflict awaiting a decision now, as a record without a resolution; `nil` when no versions compete.
    ///
    /// - Throws: ``DocumentError`` `.closed`, `.store`.
    public func unresolvedConflict() throws(DocumentError) -> ConflictRecord<Model>? {
        let versions = try versions()
        return try tracking.conflicts.unresolvedConflict(versions, in: storedHistory)
    }

    /// The document's resolution changes, oldest first.
    func resolutionChanges() throws(DocumentError) -> [Change] {
        do {
            return try library.store.resolutionChanges(of: id)
        } catch {
            throw DocumentError.store(error, "reading the resolutions of \(info.displayName)")
        }
    }
}
