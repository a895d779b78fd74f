import FolioCore
import Foundation
import GRDB

/// Which incoming and waiting changes the signed heads of an ingest vouch for.
extension Ingestion {
    /// Checks the heads of devices with changes in `incoming` and walks from each authentic one down through parent
    /// hashes, among `incoming` and the waiting changes, marking its device's changes vouched for: the incoming
    /// ones in ``vouched``, the waiting ones in the pending table (which sends them to be examined again).
    ///
    /// A walk stops at changes the log holds, at waiting changes of its device vouched for before (with whatever
    /// of its device lies below them, unless changes of the device came since), and at changes below which its
    /// device has nothing the log lacks, so it visits only what is missing; all walks of one ingestion together
    /// visit at most four times as many changes as arrived, plus 1,024. A signed head of a change the log holds
    /// under another hash throws `integrity`: its device's key signed two changes under one identity.
    mutating func vouch(with heads: [SignedHead], for incoming: [EncodedChange], into result: inout IngestResult) throws {
        guard !heads.isEmpty else { return }
        var byHash: [ChangeHash: Change] = [:]
        var counts: [DeviceID: Int] = [:]
        for encoded in incoming {
            counts[encoded.change.id.device, default: 0] += 1
            if encoded.change.id.seq > frontier.vector[encoded.change.id.device] { byHash[encoded.change.hash] = encoded.change }
        }
        // The walks together visit at most a few times as many changes as arrived, whatever waits: a peer's bytes
        // bound the work they cause.
        walkBudget = 4 * incoming.count + 1_024
        // Per device with changes here, its heads from the highest down, one per seq: the highest vouches for the
        // most, the lower ones are kept to pass on with the changes they reach. At most one per eight of the
        // device's changes here (and at least one), so that checking signatures stays a small part of the cost
        // whatever a peer sends. The local identities sign their own.
        var candidates: [DeviceID: [SignedHead]] = [:]
        for head in heads where counts[head.change.device] != nil && !localIdentities.contains(head.change.device) {
            candidates[head.change.device, default: []].append(head)
        }
        for device in candidates.keys.sorted() {
            var seen: Set<UInt64> = []
            let ordered = candidates[device]!.sorted { ($0.change.seq, $0.hash) > ($1.change.seq, $1.hash) }
                .filter { seen.insert($0.change.seq).inserted }
            // A signed head of a change in the log: only a device that signed two changes under one identity (a
            // clone of it, with its key) makes one that differs from the log.
            if let logged = ordered.first(where: { $0.change.seq <= frontier.vector[device] }),
                let stored = try storedHash(of: logged.change), stored != logged.hash, logged.isAuthentic
            {
                throw StoreError(
                    .integrity,
                    "device \(device) signed change \(logged.change.seq) with hash \(logged.hash.shortHex), but the log has \(stored.shortHex) under that identity: the device's key is used by two devices (a cloned or restored device); nothing was overwritten")
            }
            for head in ordered.filter({ $0.change.seq > frontier.vector[device] }).prefix(1 + counts[device]! / 8) {
                guard head.isAuthentic else {
                    let reason = head.publicKey.deviceID == device
                        ? "its signature does not check" : "its key is not device \(device)'s"
                    result.refusedHeads.append((head.change, reason))
                    continue
                }
                try walk(from: head, byHash: byHash, into: &result)
            }
        }
    }

    /// Marks the changes of `head`'s device in its causal past that the log lacks as vouched for.
    private mutating func walk(from head: SignedHead, byHash: [ChangeHash: Change], into result: inout IngestResult) throws {
        let device = head.change.device
        // Below a waiting change vouched for before, only changes of the device that were not vouched for then
        // (they arrived later, here or in the pending table) need the walk to go on.
        var lowestUnvouched = byHash.values.filter { $0.id.device == device }.map(\.id.seq).min() ?? .max
        if mayHaveWaiting, let deviceRow = try store.rowID(of: device, in: db, create: false), let seq = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT min(seq) FROM pending INDEXED BY pending_unvouched WHERE document = ? AND device = ? AND vouched = 0"),
            arguments: [documentRow, deviceRow])
        {
            lowestUnvouched = min(lowestUnvouched, UInt64(max(seq, 1)))
        }
        var stack = [head.hash]
        var seen: Set<ChangeHash> = []
        while let hash = stack.popLast(), walkBudget > 0 {
            guard seen.insert(hash).inserted else { continue }
            walkBudget -= 1
            let change: Change
            if hash == head.hash, let named = try byHash[hash] ?? waitingChange(hash)?.change, named.id != head.change {
                result.refusedHeads.append((head.change, "it names the change with hash \(hash.shortHex), which is \(named.id)"))
                return
            }
            if let found = byHash[hash] {
                change = found
                if found.id.device == device {
                    if hash == head.hash { headsByHash[hash] = head }
                    // A higher head of the device walked on from here already.
                    guard vouched.insert(hash).inserted else { continue }
                }
            } else if mayHaveWaiting, let found = try waitingChange(hash) {
                change = found.change
                if change.id.device == device && (!found.vouched || hash == head.hash) {
                    try markWaiting(change, head: hash == head.hash ? head : nil)
                }
                // One vouched for before had its device's changes below it vouched for with it, unless some came
                // since.
                if change.id.device == device && found.vouched && lowestUnvouched >= change.id.seq { continue }
            } else {
                continue  // in the log, or nowhere yet
            }
            // The change's own position on its device's chain is not below it.
            let below = change.vector[device] - (change.id.device == device ? 1 : 0)
            if below > frontier.vector[device] { stack.append(contentsOf: change.parents) }
        }
        // A change that names itself as its head's cannot be one of its own parents, so a cycle is impossible:
        // hashes are over the parents' hashes. `seen` guards against repeated parents only.
    }

    /// The waiting change with `hash`, decoded, and whether it is vouched for already.
    private func waitingChange(_ hash: ChangeHash) throws -> (change: Change, vouched: Bool)? {
        guard let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT body, vouched FROM pending INDEXED BY pending_by_hash WHERE document = ? AND hash = ?"),
            arguments: [documentRow, hash.data])
        else { return nil }
        let body: Data = row[0]
        // One that does not decode is dropped when it is next examined; the walk passes it by.
        guard let change = try? Change(decoding: [UInt8](body), document: document), change.hash == hash else { return nil }
        return (change, row[1])
    }

    /// Marks a waiting change vouched for (with the head that names it, if any), and has it examined again: it
    /// now waits for its device's previous change, which sends it through the drain after this ingestion.
    private mutating func markWaiting(_ change: Change, head: SignedHead?) throws {
        let deviceRow = try store.rowID(of: change.id.device, in: db, create: true)!
        try db.cachedStatement(sql: """
            UPDATE pending SET vouched = 1, head = coalesce(?, head), wait_device = ?, wait_seq = ?
            WHERE document = ? AND device = ? AND seq = ? AND hash = ?
            """).execute(arguments: [
                head.map { Data($0.encoded()) }, change.id.device.uuid.data, Int64(change.id.seq - 1),
                documentRow, deviceRow, Int64(change.id.seq), change.hash.data,
            ])
        advanced.insert(change.id.device)
    }
}
