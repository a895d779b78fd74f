import FolioConflicts
import FolioCore
import FolioStore

extension Document {
    /// Every resolution of the document's conflicts and the versions each discarded, oldest first: the loss
    /// ledger (`ConflictEngine.lossLedger(of:in:deviceNames:)`). Discarded versions stay in history,
    /// so each can be brought back with ``resolve(with:)``.
    ///
    /// - Throws: ``DocumentError`` `.store`.
    public func lossLedger() throws -> [LossRecord<Model>] {
        let resolutions: [Change]
        do {
            resolutions = try library.store.resolutionChanges(of: id)
        } catch {
            throw DocumentError.store(error, "reading the resolutions of \(info.displayName)")
        }
        return try ConflictEngine<Model>.lossLedger(of: resolutions, in: storedHistory, deviceNames: try deviceNames())
    }
}
