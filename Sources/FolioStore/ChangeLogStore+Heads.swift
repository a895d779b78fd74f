import FolioCore
import Foundation
import GRDB

/// Signed heads: what vouches for each device's changes when they travel (see `SignedHead`).
extension ChangeLogStore {
    /// The signed heads that vouch for the changes of `document` that a peer at `since` lacks, in device order and,
    /// per device, in sequence order: for the local device and its external identity (`DeviceKey.externalKey`),
    /// their latest change, signed now (once per change); for every other device, the heads it signed that reached
    /// this store with its changes above `since` (per span of 512 changes of the history, the latest of each
    /// device that batches brought heads in). A peer that receives changes of the document needs them to accept those changes (see
    /// ``ingest(encoded:heads:)``); a sender that splits its reply picks, per part, heads that vouch for one another
    /// (`PartHeads` in FolioSync).
    ///
    /// - Parameters:
    ///   - document: the document.
    ///   - since: the peer's vector of the document; empty for every head.
    ///   - signingOwn: whether to include the local identities' heads; a sender that signs its own heads per part
    ///     (``signedHead(for:)``) passes `false`.
    /// - Complexity: O(heads kept for the document), plus one Ed25519 signature per local identity whose latest
    ///   change is not signed yet.
    /// - Throws: ``StoreError``.
    public func signedHeads(
        of document: DocumentID, since: VersionVector = VersionVector(), signingOwn: Bool = true
    ) throws -> [SignedHead] {
        let (stored, tips) = try read("reading the signed heads of \(document)") {
            db -> ([SignedHead], [ChangeID: ChangeHash]) in
            guard let documentRow = try rowID(of: document, in: db) else { return ([], [:]) }
            var stored: [SignedHead] = []
            var rows = try RawRows(
                db.cachedStatement(sql: "SELECT head FROM device_head WHERE document = ?"), arguments: [documentRow])
            while let row = try rows.next() {
                let bytes: Data = row[0]
                // A stored head was checked when it arrived; one that no longer decodes is left out, not fatal.
                guard let head = try? SignedHead(decoding: [UInt8](bytes)), head.document == document,
                    head.change.seq > since[head.change.device]
                else { continue }
                stored.append(head)
            }
            let frontier = try frontier(of: documentRow, in: db)
            var tips: [ChangeID: ChangeHash] = [:]
            for identity in [localDevice.id, externalKey.id] where signingOwn {
                if let tip = frontier.tips[identity], tip.seq > since[identity] {
                    tips[ChangeID(device: identity, seq: tip.seq)] = tip.hash
                }
            }
            return (stored, tips)
        }
        var heads = stored.filter { $0.change.device != localDevice.id && $0.change.device != externalKey.id }
        heads += tips.sorted { $0.key < $1.key }.map { id, hash in signedTip(of: document, id: id, hash: hash) }
        return heads.sorted { ($0.change.device, $0.change.seq) < ($1.change.device, $1.change.seq) }
    }

    /// A head for `change`, signed now, when the change is the local device's or its external identity's;
    /// `nil` for any other device's. For a sender that splits its changes (files of a shared folder), so that each
    /// part carries a head reaching its own changes.
    public func signedHead(for change: Change) -> SignedHead? {
        switch change.id.device {
        case key.id: SignedHead(signing: change, with: key)
        case externalKey.id: SignedHead(signing: change, with: externalKey)
        default: nil
        }
    }

    /// The head of a local identity's latest change, signed once and remembered.
    private func signedTip(of document: DocumentID, id: ChangeID, hash: ChangeHash) -> SignedHead {
        if let kept = signedTips.withLock({ $0[document]?[id.device] }), kept.change == id, kept.hash == hash {
            return kept
        }
        let signer = id.device == key.id ? key : externalKey
        let head = SignedHead(document: document, change: id, hash: hash, signedWith: signer)
        signedTips.withLock { $0[document, default: [:]][id.device] = head }
        return head
    }

    /// How many changes of a document's history one span of kept heads covers: a store keeps, per device, the
    /// latest head of each span (a span counts the changes a head's change knows: its own and all before it).
    ///
    /// Spans are counted in the whole history, not per device, so that the heads kept at a span's end vouch for one
    /// another: each is the latest its device had whose change knows fewer than the span's end, and a change that
    /// another device's head knows of is reached by such a head, since a store takes a device's changes only up to a
    /// head of it. A sender that splits a history into parts finds in each such a set of heads (see `PartHeads` in
    /// FolioSync), so that a history several devices wrote together reaches a new device part by part, and what waits
    /// for a head stays within about a part. Changes arriving one by one, each with its head, keep one head per
    /// device and span, not a head each.
    static let headSpan: UInt64 = 512

    /// Keeps `head`, whose change (`change`) has just entered the log, to pass on with its device's changes, in place
    /// of the kept head of the same device and span of ``headSpan`` below it. Inside the caller's write transaction.
    ///
    /// A device's changes enter the log in the order of their sequence numbers, so every kept head of the device is
    /// below this one; and each of its changes knows more than the one before, so its heads of one span are
    /// consecutive: the one below is the only one of the span that can be kept.
    func keep(_ head: SignedHead, of change: Change, documentRow: Int64, deviceRow: Int64, in db: Database) throws {
        let seq = Int64(head.change.seq)
        let span = Int64(change.vector.changeCount / Self.headSpan)
        let below = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT seq, span FROM device_head WHERE document = ? AND device = ? AND seq < ?
                    ORDER BY seq DESC LIMIT 1
                    """),
            arguments: [documentRow, deviceRow, seq])
        if let below, let belowSpan: Int64 = below[1], belowSpan == span {
            let belowSeq: Int64 = below[0]
            try db.cachedStatement(sql: "DELETE FROM device_head WHERE document = ? AND device = ? AND seq = ?")
                .execute(arguments: [documentRow, deviceRow, belowSeq])
        }
        try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO device_head (document, device, seq, head, span) VALUES (?, ?, ?, ?, ?)"
        )
        .execute(arguments: [documentRow, deviceRow, seq, Data(head.encoded()), span])
    }
}
