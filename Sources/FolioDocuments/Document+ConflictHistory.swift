import FolioCore
import FolioStore
import Foundation

/// One conflict of a document, open or settled: the competing versions, the state they grew from and, once
/// settled, the resolution that settled them. What conflict-inspection reports show.
///
/// Automatic strategies (latest wins, merge, keep both) settle a conflict as soon as a device sees it, so such a
/// conflict is visible afterwards only through its resolution change; ``Document/conflictHistory()`` rebuilds it
/// from there.
public struct ConflictRecord<Model: DocumentModel>: Sendable {
    /// The competing versions: the one every device showed first, then the others in causal order. Each carries
    /// the common ancestor's state and its ``DocumentVersion/changes`` from it.
    public let versions: [DocumentVersion<Model>]
    /// The latest change every version includes (the common ancestor); `nil` when they share no history.
    public let ancestor: Change?
    /// The resolution change; `nil` while the conflict is open.
    public let resolution: Change?
    /// The device that resolved; `nil` while the conflict is open.
    public let resolvedBy: Device?

    /// How the conflict was settled; `nil` while it is open.
    public var strategy: Resolution.Strategy? {
        guard case .resolution(let resolution)? = resolution?.kind else { return nil }
        return resolution.strategy
    }

    /// The heads whose versions the resolution kept (ascending); empty while open.
    public var chosen: [ChangeHash] {
        guard case .resolution(let resolution)? = resolution?.kind else { return [] }
        return resolution.chosen
    }

    /// The heads whose versions the resolution discarded (ascending): its loss-ledger entries; empty while open.
    public var discarded: [ChangeHash] {
        guard case .resolution(let resolution)? = resolution?.kind else { return [] }
        return resolution.discarded
    }

    /// Whether a resolution settled it.
    public var isResolved: Bool { resolution != nil }
}

extension Document {
    /// Every conflict the log records as settled, oldest first: for each resolution change, the versions it
    /// settled (its parents' states, grouped by equal state as ``versions()`` groups heads), their common
    /// ancestor, and the resolution itself. Reads the log only; nothing is appended.
    ///
    /// - Complexity: a replay per parent of each resolution, and one for each common ancestor.
    /// - Throws: ``DocumentError`` `.store` when the log cannot be read, `.invalidContents` when it holds contents
    ///   the model refuses.
    public func conflictHistory() throws(DocumentError) -> [ConflictRecord<Model>] {
        let resolutions: [Change]
        do {
            resolutions = try library.store.resolutionChanges(of: id)
        } catch {
            throw .store(error, "reading the resolutions of \(info.displayName)")
        }
        let names = try knownDeviceNames()
        var records: [ConflictRecord<Model>] = []
        for change in resolutions {
            var parents: [Change] = []
            for hash in change.parents {
                let parent: Change?
                do { parent = try library.store.change(hash, of: id) } catch { throw .store(error, "reading the log") }
                if let parent { parents.append(parent) }
            }
            let heads = try Self.competingHeads(among: parents, of: id, in: library)
            records.append(try conflictRecord(of: heads, settledBy: change, names: names))
        }
        return records
    }

    /// The conflict awaiting a decision now, as a record without a resolution; `nil` when no versions compete.
    ///
    /// - Throws: ``DocumentError`` `.closed`, `.store`.
    public func unresolvedConflict() throws(DocumentError) -> ConflictRecord<Model>? {
        let versions = try versions()
        guard versions.count > 1 else { return nil }
        let ancestor = try commonAncestorChange(of: versions.map(\.head))
        return ConflictRecord(versions: versions, ancestor: ancestor, resolution: nil, resolvedBy: nil)
    }

    /// The record of `heads` competing and settled by `resolution`: their states grouped by equal state, the
    /// winner's group first.
    private func conflictRecord(of heads: [Change], settledBy resolution: Change, names: [DeviceID: String]) throws(DocumentError) -> ConflictRecord<Model> {
        let replay = DocumentReplay<Model>(store: library.store, document: id)
        var groups: [VersionGroup<Model>] = []
        var keys: [ContentHash] = []
        for head in heads.sorted(by: { ($0.lamport, $0.id.device) < ($1.lamport, $1.id.device) }) {
            let state = try replay.state(at: head).model
            let key = ContentHash(hashing: state.contents().encoded())
            if let index = keys.firstIndex(of: key) {
                groups[index].heads.append(head)
            } else {
                keys.append(key)
                groups.append(VersionGroup(heads: [head], state: state))
            }
        }
        // The version every device showed while the conflict stood: the highest lamport, then device.
        let winner = heads.max { ($0.lamport, $0.id.device) < ($1.lamport, $1.id.device) }
        if let index = groups.firstIndex(where: { $0.heads.contains { $0.hash == winner?.hash } }), index > 0 {
            groups.insert(groups.remove(at: index), at: 0)
        }
        let ancestor = try commonAncestorChange(of: groups.map(\.head))
        let ancestorState = try ancestor.map { change throws(DocumentError) in try replay.state(at: change).model } ?? Model()
        let versions = groups.enumerated().map { index, group in
            DocumentVersion(
                head: group.head, heads: group.heads.map(\.hash), savingDevice: device(group.head.id.device, names),
                contents: group.state, ancestor: ancestorState, isCurrent: index == 0, isConflict: false)
        }
        return ConflictRecord(
            versions: versions, ancestor: ancestor, resolution: resolution, resolvedBy: device(resolution.id.device, names))
    }

    /// The latest change all of `heads` include: among the changes their vectors share, the causally maximal one
    /// that wins (highest lamport, then device; several in a criss-cross history), the same on every device.
    func commonAncestorChange(of heads: [Change]) throws(DocumentError) -> Change? {
        guard var meet = heads.first?.vector else { return nil }
        for head in heads.dropFirst() { meet = meet.intersecting(head.vector) }
        var candidates: [Change] = []
        do {
            for entry in meet.entries {
                if let change = try library.store.change(ChangeID(device: entry.device, seq: entry.seq), of: id) {
                    candidates.append(change)
                }
            }
        } catch {
            throw .store(error, "reading the common ancestor")
        }
        return candidates
            .filter { candidate in !candidates.contains { $0.id != candidate.id && $0.vector.contains(candidate.id) } }
            .max { ($0.lamport, $0.id.device) < ($1.lamport, $1.id.device) }
    }

    /// `parents` without those that changed only the name or place since contents another parent includes
    /// (a rename or move concurrent with an edit competes with nothing), as the document's own heads are read.
    private static func competingHeads(among parents: [Change], of id: DocumentID, in library: DocumentLibrary) throws(DocumentError) -> [Change] {
        guard parents.count > 1 else { return parents }
        var result: [Change] = []
        for candidate in parents {
            var base = candidate
            while case .lifecycle = base.kind, let parent = base.parents.first {
                let found: Change?
                do { found = try library.store.change(parent, of: id) } catch { throw .store(error, "reading the log") }
                guard let found else { break }
                base = found
            }
            let subsumed = base.hash != candidate.hash
                && parents.contains { $0.hash != candidate.hash && $0.vector.contains(base.id) }
            if !subsumed { result.append(candidate) }
        }
        return result
    }

    private func knownDeviceNames() throws(DocumentError) -> [DeviceID: String] {
        do {
            return Dictionary(try library.store.devices().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        } catch {
            throw .store(error, "reading device names")
        }
    }

    private func device(_ id: DeviceID, _ names: [DeviceID: String]) -> Device {
        Device(id: id, name: names[id] ?? "")
    }
}
