import FolioCore
import Foundation
import GRDB

/// Which incoming and waiting changes the signed heads of an ingest vouch for.
extension Ingestion {
    /// Checks the heads of devices with changes in `incoming` and walks from the authentic ones down through parent
    /// hashes, among `incoming` and the waiting changes, marking each head's device's changes vouched for: the
    /// incoming ones in ``vouched``, the waiting ones in the pending table (which sends them to be examined again).
    ///
    /// One walk serves every head: changes are visited once each, highest lamport timestamp first (so a change's
    /// children among those reached are visited before it), each carrying the devices whose heads reach it. A device
    /// is carried no further below a change the log holds, below a change under which it has nothing the log lacks,
    /// or below a waiting change of its own vouched for before (with whatever of it lies below, unless changes of it
    /// came since). The walk visits at most four times as many changes as arrived, plus 1,024. A signed head of a
    /// change the log holds under another hash throws `integrity`: its device's key signed two changes under one
    /// identity.
    mutating func vouch(with heads: [SignedHead], for incoming: [EncodedChange], into result: inout IngestResult) throws
    {
        guard !heads.isEmpty || !removedOwn.isEmpty else { return }
        var byHash: [ChangeHash: Change] = [:]
        var counts: [DeviceID: Int] = [:]
        for encoded in incoming {
            counts[encoded.change.id.device, default: 0] += 1
            if encoded.change.id.seq > frontier.vector[encoded.change.id.device] {
                byHash[encoded.change.hash] = encoded.change
            }
        }
        // Per device with changes here, its heads from the highest down, one per seq: the highest vouches for the
        // most, the lower ones are kept to pass on with the changes they reach. At most one per eight of the
        // device's changes here (and at least one), so that checking signatures stays a small part of the cost
        // whatever a peer sends. The local identities sign their own, except those of changes removed with the
        // document's local copy: the head signed then vouches for them, and so may the peer's of them.
        var candidates: [DeviceID: [SignedHead]] = [:]
        for head in heads where counts[head.change.device] != nil {
            // A head in a local identity's name vouches only for the removed changes (at most the removed head's seq).
            guard
                !localIdentities.contains(head.change.device)
                    || head.change.seq <= removedOwn[head.change.device]?.change.seq ?? 0
            else { continue }
            candidates[head.change.device, default: []].append(head)
        }
        for device in removedOwn.keys where counts[device] != nil && candidates[device] == nil {
            candidates[device] = []
        }
        var walk = VouchingWalk(devices: candidates.keys.sorted(), budget: 4 * incoming.count + 1_024)
        let hasWaiting = mayHaveWaiting
        let lookUp = { (hash: ChangeHash) throws -> (change: Change, vouched: Bool)? in
            hasWaiting ? try self.waitingChange(hash) : nil
        }
        for (bit, device) in walk.devices.enumerated() {
            var seen: Set<UInt64> = []
            let ordered = candidates[device, default: []].sorted { ($0.change.seq, $0.hash) > ($1.change.seq, $1.hash) }
                .filter { seen.insert($0.change.seq).inserted }
            // A signed head of a change in the log: only a device that signed two changes under one identity (a
            // clone of it, with its key) makes one that differs from the log.
            if let logged = ordered.first(where: { $0.change.seq <= frontier.vector[device] }),
                let stored = try storedHash(of: logged.change), stored != logged.hash, logged.isAuthentic
            {
                throw StoreError(
                    .integrity,
                    "device \(device) signed change \(logged.change.seq) with hash \(logged.hash.shortHex), but the log has \(stored.shortHex) under that identity: the device's key is used by two devices (a cloned or restored device); nothing was overwritten"
                )
            }
            let checked = 1 + counts[device, default: 0] / 8
            var checking = Array(ordered.filter({ $0.change.seq > frontier.vector[device] }).prefix(checked))
            // The head signed when the document's local copy was removed, besides the peer's of those changes.
            if let removed = removedOwn[device], removed.change.seq > frontier.vector[device],
                !checking.contains(where: { $0.hash == removed.hash })
            {
                checking.append(removed)
            }
            for head in checking {
                guard head.isAuthentic else {
                    let reason =
                        head.publicKey.deviceID == device
                        ? "its signature does not check" : "its key is not device \(device)'s"
                    result.refusedHeads.append((head.change, reason))
                    continue
                }
                guard let index = try walk.node(head.hash, byHash: byHash, waiting: lookUp) else { continue }
                let node = walk[index]
                guard node.change.id == head.change else {
                    result.refusedHeads.append(
                        (head.change, "it names the change with hash \(head.hash.shortHex), which is \(node.change.id)")
                    )
                    continue
                }
                walk.reach(index, by: DeviceMask(bit))
                if node.isWaiting { try markWaiting(node.change, head: head) } else { headsByHash[head.hash] = head }
            }
        }
        guard walk.hasWork else { return }
        // Below a waiting change vouched for before, a device is carried on only when changes of it that were not
        // vouched for then are here or wait (they arrived later).
        var lowestUnvouched: [DeviceID: UInt64] = [:]
        for change in byHash.values {
            lowestUnvouched[change.id.device] = min(lowestUnvouched[change.id.device] ?? .max, change.id.seq)
        }
        for device in walk.reachingDevices where mayHaveWaiting {
            guard let deviceRow = try store.rowID(of: device, in: db),
                let seq = try Int64.fetchOne(
                    db.cachedStatement(
                        sql:
                            "SELECT min(seq) FROM pending INDEXED BY pending_unvouched WHERE document = ? AND device = ? AND vouched = 0"
                    ),
                    arguments: [documentRow, deviceRow])
            else { continue }
            lowestUnvouched[device] = min(lowestUnvouched[device] ?? .max, UInt64(max(seq, 1)))
        }
        while let index = walk.next() {
            let node = walk[index]
            let device = node.change.id.device
            let bit = walk.bit(of: device)
            if let bit, node.reachers.contains(bit) {
                if node.isWaiting {
                    if !node.wasVouched { try markWaiting(node.change, head: nil) }
                } else {
                    vouched.insert(node.change.hash)
                }
            }
            var carried = node.reachers.keeping { reacher in
                let reacher = walk.devices[reacher]
                let below = node.change.vector[reacher] - (device == reacher ? 1 : 0)
                return below > frontier.vector[reacher]
            }
            if let bit,
                node.isWaiting && node.wasVouched && carried.contains(bit)
                    && (lowestUnvouched[device] ?? .max) >= node.change.id.seq
            {
                carried.remove(bit)
            }
            guard !carried.isEmpty else { continue }
            for parent in node.change.parents {
                guard let parent = try walk.node(parent, byHash: byHash, waiting: lookUp) else { continue }
                walk.reach(parent, by: carried)
            }
        }
    }

    /// The waiting change with `hash`, decoded, and whether it is vouched for already.
    func waitingChange(_ hash: ChangeHash) throws -> (change: Change, vouched: Bool)? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT body, vouched FROM pending INDEXED BY pending_by_hash WHERE document = ? AND hash = ?"),
                arguments: [documentRow, hash.data])
        else { return nil }
        let body: Data = row[0]
        // One that does not decode is dropped when it is next examined; the walk passes it by.
        guard let change = try? Change(checking: [UInt8](body), document: document), change.hash == hash else {
            return nil
        }
        return (change, row[1])
    }

    /// Marks a waiting change vouched for (with the head that names it, if any), and has it examined again: it
    /// now waits for its device's previous change, which sends it through the drain after this ingestion.
    private mutating func markWaiting(_ change: Change, head: SignedHead?) throws {
        let deviceRow = try store.insertingRowID(of: change.id.device, in: db)
        try db.cachedStatement(
            sql: """
                UPDATE pending SET vouched = 1, head = coalesce(?, head), wait_device = ?, wait_seq = ?
                WHERE document = ? AND device = ? AND seq = ? AND hash = ?
                """
        ).execute(arguments: [
            head.map { Data($0.encoded()) }, change.id.device.uuid.data, Int64(change.id.seq - 1),
            documentRow, deviceRow, Int64(change.id.seq), change.hash.data,
        ])
        advanced.insert(change.id.device)
    }
}
