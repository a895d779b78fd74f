import FolioCore
import FolioStore
import Foundation

/// A version a resolution discarded: kept in history, listed so that nothing is lost silently.
public struct DiscardedVersion<Model: DocumentModel>: Sendable {
    /// The discarded version's head.
    public let head: Change
    /// The device that made it.
    public let device: Device
    /// Its contents.
    public let contents: Model
}

/// One resolution and what it discarded: an entry of the loss ledger.
public struct LossRecord<Model: DocumentModel>: Sendable {
    /// The resolution change.
    public let resolution: Change
    /// The device that resolved.
    public let resolvedBy: Device
    /// How it was settled.
    public let strategy: Resolution.Strategy
    /// The versions it discarded (empty for a clean merge).
    public let discarded: [DiscardedVersion<Model>]
}

extension Document {
    /// Every resolution of the document's conflicts and the versions each discarded, oldest first: the loss
    /// ledger. Discarded versions stay in history, so each can be brought back with ``resolve(with:)``.
    ///
    /// - Throws: ``DocumentError`` `.store`.
    public func lossLedger() throws(DocumentError) -> [LossRecord<Model>] {
        let resolutions: [Change]
        let names: [DeviceID: String]
        do {
            resolutions = try library.store.resolutionChanges(of: id)
            names = Dictionary(try library.store.devices().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        } catch {
            throw .store(error, "reading the resolutions of \(info.displayName)")
        }
        let replay = DocumentReplay<Model>(store: library.store, document: id)
        var ledger: [LossRecord<Model>] = []
        for change in resolutions {
            guard case .resolution(let resolution) = change.kind else { continue }
            var discarded: [DiscardedVersion<Model>] = []
            // A resolution is made on the versions it settles: a discarded hash that is not a parent (forged or
            // corrupt) would list a change some devices hold and others do not.
            for hash in resolution.discarded where change.parents.contains(hash) {
                let head: Change?
                do { head = try library.store.change(hash, of: id) } catch { throw .store(error, "reading the log") }
                guard let head else { continue }
                discarded.append(DiscardedVersion(
                    head: head, device: Device(id: head.id.device, name: names[head.id.device] ?? ""),
                    contents: try replay.state(at: head).model))
            }
            ledger.append(LossRecord(
                resolution: change, resolvedBy: Device(id: change.id.device, name: names[change.id.device] ?? ""),
                strategy: resolution.strategy, discarded: discarded))
        }
        return ledger
    }
}
