import FolioCore
import Foundation
import GRDB

/// Ready changes vouched for are staged: they count as in the log for the rest of the ingestion, and are written at
/// its end, or held in the pending table until a head that enters the log with them reaches them.
extension Ingestion {
    /// Stages a ready change vouched for (or trusted): it counts as in the log for what this ingestion examines
    /// next, and is written by ``commitStaged(into:)``.
    mutating func stage(_ encoded: EncodedChange, head: SignedHead?, incoming: Bool) throws {
        let change = encoded.change
        try validateHistory(change)
        let deviceRow = try store.insertingRowID(of: change.id.device, in: db)
        frontier.record(change, size: encoded.bytes.count, deviceRow: deviceRow)
        appliedNow[change.hash] = change
        stagedHashes[change.id] = change.hash
        advanced.insert(change.id.device)
        staged.append((encoded, head, deviceRow, incoming))
    }

    /// Writes the staged changes that a head entering the log with them reaches (see ``writable()``), and holds the
    /// others in the pending table, vouched for, waiting for their head's change: none enters the log without a
    /// head the store keeps and passes on with it. A held change waits on itself: what examines it again is a change
    /// that needs it (``missingDependency(of:into:depth:)``), typically its head's own change once that is
    /// otherwise ready, or a head that names it.
    mutating func commitStaged(into result: inout IngestResult) throws {
        guard !staged.isEmpty else { return }
        let writable = writable()
        let holding = writable.contains(false)
        if holding { frontier = frontierBefore }
        for (index, entry) in staged.enumerated() where writable[index] {
            let change = entry.encoded.change
            try insert(
                change, body: StorageCompression.packBody(entry.encoded.bytes), documentRow: documentRow,
                deviceRow: entry.deviceRow)
            if let head = entry.head {
                try store.keep(head, of: change, documentRow: documentRow, deviceRow: entry.deviceRow, in: db)
            }
            store.keepDecoded(change, size: entry.encoded.bytes.count, in: db)
            if holding { frontier.record(change, size: entry.encoded.bytes.count, deviceRow: entry.deviceRow) }
            result.applied.append(change.id)
            if mayHaveWaiting {
                try dropWaiting(sameIdentityAs: change, deviceRow: entry.deviceRow, into: &result)
            }
        }
        for (index, entry) in staged.enumerated() where !writable[index] {
            let change = entry.encoded.change
            appliedNow[change.hash] = nil
            switch try park(entry.encoded, waitingFor: change.id, vouched: true, head: entry.head, into: &result) {
            case .parked:
                if entry.incoming { result.deferred += 1 }
                hasWaiting = true
            case .alreadyWaiting:
                if entry.incoming { result.duplicates += 1 }
                hasWaiting = true
            case .full:
                result.turnedAway.append(change.id)
            }
        }
        staged = []
        stagedHashes = [:]
        // Writing a change drops the waiting ones with its identity: whether any wait is read again.
        if removedWaiting && !holding {
            hasWaiting =
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM pending WHERE document = ? LIMIT 1"),
                    arguments: [documentRow]) ?? false
        }
    }

    /// Which staged changes may enter the log: those that a staged change entering with them reaches with its head
    /// (a head of device D reaches D's changes up to its own), and whose staged dependencies enter too. A head
    /// whose own change cannot enter (it waits for another device's change, or depends on a change held) vouches
    /// for nothing yet. Changes the caller trusts need no head.
    ///
    /// - Complexity: O(staged × devices) per round; each round but the last holds back at least one more change.
    func writable() -> [Bool] {
        var writable = [Bool](repeating: true, count: staged.count)
        if trusted { return writable }
        var reach: [DeviceID: UInt64] = [:]
        for entry in staged where entry.head != nil {
            let id = entry.encoded.change.id
            reach[id.device] = max(reach[id.device] ?? 0, id.seq)
        }
        while true {
            var held: [DeviceID: UInt64] = [:]
            var kept: [DeviceID: UInt64] = [:]
            for (index, entry) in staged.enumerated() {
                let change = entry.encoded.change
                let device = change.id.device
                writable[index] =
                    writable[index] && change.id.seq <= reach[device] ?? 0
                    && change.vector.entries.allSatisfy { entry in held[entry.device].map { entry.seq < $0 } ?? true }
                if !writable[index] {
                    held[device] = min(held[device] ?? .max, change.id.seq)
                } else if entry.head != nil {
                    kept[device] = max(kept[device] ?? 0, change.id.seq)
                }
            }
            if kept == reach { return writable }
            reach = kept
        }
    }
}
