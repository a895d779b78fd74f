import FolioConflicts
import FolioCore
import FolioStore

extension Document {
    /// Every resolution of the document's conflicts and the versions each discarded, oldest first: the loss
    /// ledger (`ConflictEngine.lossLedger(of:in:devices:)`). Discarded versions stay in history,
    /// so each can be brought back with ``resolve(with:)``.
    ///
    /// - Throws: ``DocumentError`` `.store`.
    public func lossLedger() throws(DocumentError) -> [LossRecord<Model>] {
        try ConflictEngine<Model>.lossLedger(
            of: resolutionChanges(), in: storedHistory, devices: try knownDevices())
    }
}
