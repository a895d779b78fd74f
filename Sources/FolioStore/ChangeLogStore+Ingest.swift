import FolioCore
import Foundation
import GRDB

/// What an ``ChangeLogStore/ingest(encoded:heads:)`` call did.
public struct IngestResult: Hashable, Sendable {
    /// The changes that entered the log, in the order they were applied (a causal order), including earlier pending
    /// changes that the new ones made ready.
    public var applied: [ChangeID] = []
    /// Changes that were already in the log or already waiting: ignored.
    public var duplicates = 0
    /// Changes of this call that arrived before their dependencies and now wait in the pending table, or that only a
    /// head whose own change must wait vouches for, and which wait with that change (see
    /// ``ChangeLogStore/ingest(encoded:heads:)``).
    public var deferred = 0
    /// Changes that waited in the pending table and, once their dependencies arrived, proved invalid (bad parents,
    /// vector or timestamps), or lost their identity to another change with it (a forged or cloned change):
    /// dropped from the pending table, with the reason, so that they cannot block the document.
    public var rejected: [(id: ChangeID, reason: String)] = []
    /// Changes of this call that arrived before their dependencies while the document already had as many waiting
    /// changes as ``StoreLimits/waitingChangesPerDocument`` allows: not kept. A peer sends them again once they
    /// are missing from the document's vector.
    public var turnedAway: [ChangeID] = []
    /// Changes of this call that no signed head of their device reaches yet (see ``ChangeLogStore/ingest(encoded:heads:)``):
    /// they wait, as early changes do, until a head that covers them arrives, and count against the same bound.
    public var unvouched: [ChangeID] = []
    /// Unvouched changes, of any document, that had waited ``StoreLimits/unvouchedAge`` or longer when this call
    /// began: dropped (see ``UnvouchedChanges/dropExpired(now:)``). A peer sends them again, with a head.
    public var expired = 0
    /// Unvouched changes, of any document, that arrived before this call and were dropped, oldest first, to make
    /// room within ``StoreLimits/unvouchedBytes`` for unvouched changes of this call. A peer sends them again.
    public var evicted = 0
    /// Heads of this call that were refused, with the reason: a signature that does not check, or a key that is
    /// not the named device's. The changes they named stay unvouched.
    public var refusedHeads: [(head: ChangeID, reason: String)] = []
    /// The documents whose logs grew (changes of theirs were applied), in identity order.
    public var updatedDocuments: [DocumentID] = []

    /// Equal when the same changes were applied, ignored, deferred, rejected, turned away, left unvouched, expired
    /// and evicted, and the same heads were refused.
    public static func == (lhs: IngestResult, rhs: IngestResult) -> Bool {
        lhs.applied == rhs.applied && lhs.duplicates == rhs.duplicates && lhs.deferred == rhs.deferred
            && lhs.expired == rhs.expired && lhs.evicted == rhs.evicted
            && lhs.rejected.map(\.id) == rhs.rejected.map(\.id)
            && lhs.rejected.map(\.reason) == rhs.rejected.map(\.reason)
            && lhs.turnedAway == rhs.turnedAway && lhs.updatedDocuments == rhs.updatedDocuments
            && lhs.unvouched == rhs.unvouched && lhs.refusedHeads.map(\.head) == rhs.refusedHeads.map(\.head)
    }

    /// Hashes what was applied and rejected.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(applied)
        hasher.combine(updatedDocuments)
        hasher.combine(duplicates)
        hasher.combine(deferred)
        hasher.combine(rejected.map(\.id))
        hasher.combine(turnedAway)
        hasher.combine(unvouched)
        hasher.combine(refusedHeads.map(\.head))
        hasher.combine(expired)
        hasher.combine(evicted)
    }

    /// Creates an empty result.
    public init() {}
}

extension ChangeLogStore {
    /// Adds changes from peers, in any order, idempotently, accepting a change as its device's only when a head
    /// signed by that device vouches for it.
    ///
    /// A head of device D vouches for D's changes in its causal past that the log lacks: the store walks from the
    /// head's change down through parent hashes, among `changes` and the changes that wait, and each change of D
    /// it meets is vouched for. A change no authentic head reaches waits, in ``IngestResult/unvouched``, until a
    /// later call brings a head that reaches it (a sender puts in each message a head that reaches its changes
    /// there or in the next message), within the bounds of ``StoreLimits``: per document, in bytes across the store
    /// (the oldest make room, ``IngestResult/evicted``), and in age (the call first drops those that waited too
    /// long, ``IngestResult/expired``, by the store's clock). Only heads of devices with changes among `changes` are checked, at most one
    /// per eight of a device's changes (and at least one); a head that does not check is reported in
    /// ``IngestResult/refusedHeads``. Heads whose changes enter the log are kept, to pass on with them (see
    /// ``signedHeads(of:since:signingOwn:)``), and a change enters only when a head the store keeps reaches it: one
    /// that only heads whose own changes must wait (for a change of another device) reach waits with them, vouched
    /// for, and enters when one of them does (``IngestResult/deferred``), so that whatever the store passes on, the heads it passes
    /// on vouch for. A change under a logged identity with another hash is dropped
    /// (``IngestResult/rejected``): nothing its device signed can vouch for it.
    ///
    /// A change enters the log only after everything in its vector; one that arrives early waits in the pending table
    /// (up to ``StoreLimits/waitingChangesPerDocument`` per document) and is applied by the call that brings its last
    /// dependency. A change already present is ignored. Each applied change is checked as ``verify(checkingPages:)``
    /// checks the log, so the store accepts exactly the histories `verify` finds sound: its parents are in its causal
    /// past with lower lamport timestamps, no more than `ChangeLimits.lamportStep` below its own; its vector is its
    /// parents' merged plus itself; it is made on its device's previous change. A waiting change that fails those
    /// checks when it becomes ready, or whose identity another change took first, is dropped and reported in
    /// ``IngestResult/rejected``. Changes in the local device's name (or its external identity's,
    /// `DeviceKey.externalKey`) that the log does not hold are refused: only this device makes them. All of it happens
    /// in one transaction: when an error is thrown, nothing was applied.
    ///
    /// - Complexity: O(changes × (parents × log n + devices)), plus one signature check per device with changes;
    ///   a waiting change is re-examined only when a change it waits for, or a head that reaches it, arrives.
    /// - Throws: ``StoreError`` with code `integrity` when an authentic head names a logged identity with another
    ///   hash (its device's key signed two changes under one identity; the error names the device and seq, and
    ///   nothing is overwritten), `invalidChange` when a ready change breaks the rules above, its numbers exceed
    ///   `ChangeLimits`, or it claims to be this device's own, or `database`.
    @discardableResult
    public func ingest(encoded changes: [EncodedChange], heads: [SignedHead]) throws -> IngestResult {
        try ingest(changes, heads: heads, trusted: false)
    }

    /// Adds changes from peers with the heads that vouch for them; the same as ``ingest(encoded:heads:)``.
    ///
    /// - Throws: ``StoreError``, as ``ingest(encoded:heads:)``.
    @discardableResult
    public func ingest(_ changes: [Change], heads: [SignedHead]) throws -> IngestResult {
        try ingest(changes.map(EncodedChange.init), heads: heads, trusted: false)
    }

    /// Adds changes whose authors the caller vouches for itself, without signed heads: a copy of this device's own
    /// backup, a trusted import, tests. Every other check of ``ingest(encoded:heads:)`` applies. Changes from a
    /// peer or a shared folder must go through ``ingest(encoded:heads:)``: here, anyone's name is taken at its word.
    ///
    /// - Throws: ``StoreError``, as ``ingest(encoded:heads:)``; `integrity` also when a change has the identity of a
    ///   logged change but another hash (a device identity reused by a cloned or restored device).
    @discardableResult
    public func ingest(trusting changes: [Change]) throws -> IngestResult {
        try ingest(changes.map(EncodedChange.init), heads: [], trusted: true)
    }

    /// ``ingest(trusting:)`` for changes with their encodings.
    ///
    /// - Throws: ``StoreError``, as ``ingest(encoded:heads:)``.
    @discardableResult
    public func ingest(trustingEncoded changes: [EncodedChange]) throws -> IngestResult {
        try ingest(changes, heads: [], trusted: true)
    }

    private func ingest(_ changes: [EncodedChange], heads: [SignedHead], trusted: Bool) throws(StoreError)
        -> IngestResult
    {
        guard !changes.isEmpty else { return IngestResult() }
        let byDocument = Dictionary(grouping: changes, by: \.change.document)
        let headsByDocument = Dictionary(grouping: heads, by: \.document)
        // The arrival time of the changes that wait, read once.
        let now = clock.now().millisecondsSince1970
        return try write("ingesting \(changes.count) changes") { db in
            var result = IngestResult()
            result.expired = try expireUnvouched(now: now, in: db)
            for document in byDocument.keys.sorted() {
                let incoming = byDocument[document]!.sorted {
                    ($0.change.lamport, $0.change.id) < ($1.change.lamport, $1.change.id)
                }
                var ingestion = try Ingestion(store: self, document: document, db: db, trusted: trusted, now: now)
                if !trusted { try ingestion.vouch(with: headsByDocument[document] ?? [], for: incoming, into: &result) }
                try ingestion.ingest(incoming, into: &result)
            }
            return result
        }
    }
}

/// One document's share of an ingest, inside the caller's transaction.
struct Ingestion {
    let store: ChangeLogStore
    let document: DocumentID
    let db: Database
    let documentRow: Int64
    /// The document's frontier with the changes staged so far (see ``staged``): what readiness is judged against.
    var frontier: Frontier
    /// The frontier as the log has it before this ingestion writes anything.
    let frontierBefore: Frontier
    let insert: ChangeRowInserter
    /// The identities only this device makes changes as: its own and its external identity (``DeviceKey/externalKey``).
    let localIdentities: [DeviceID]
    /// Changes staged in this transaction, by hash: parents are usually among them, which spares a lookup.
    var appliedNow: [ChangeHash: Change] = [:]
    /// The changes found ready and vouched for, in the (causal) order they were found so, with the head that names
    /// each, if any: written to the log by ``commitStaged(into:)`` when a head that enters the log with them
    /// reaches them, held in the pending table otherwise (see ``writable()``).
    var staged: [(encoded: EncodedChange, head: SignedHead?, deviceRow: Int64, incoming: Bool)] = []
    /// The hashes of the staged changes, by identity.
    var stagedHashes: [ChangeID: ChangeHash] = [:]
    /// Devices whose changes were applied by this ingestion and whose waiting dependants are not yet re-examined.
    var advanced: Set<DeviceID> = []
    /// Whether changes of the document wait in the pending table, when this ingestion learnt it (`nil`: as before).
    var hasWaiting: Bool?
    /// How many changes of the document wait, once read (when the first change of this call had to wait), and how
    /// many this ingestion parked and removed since: written back with the frontier.
    var waitingCount: Int?
    var waitingDelta = 0
    /// Whether this ingestion removed waiting changes, and the hashes of those another change's identity dropped.
    var removedWaiting = false
    var dropped: Set<Data> = []
    /// Whether the caller vouches for every change itself (``ChangeLogStore/ingest(trusting:)``).
    let trusted: Bool
    /// The incoming changes that a signed head reaches, and the heads that name incoming changes, by hash.
    var vouched: Set<ChangeHash> = []
    var headsByHash: [ChangeHash: SignedHead] = [:]
    /// How many changes of the document wait for a head, once read (when this ingestion first parks one).
    var unvouchedCount: Int?
    /// The arrival time of the changes this ingestion parks, in milliseconds since 1970.
    let now: Int64

    init(store: ChangeLogStore, document: DocumentID, db: Database, trusted: Bool, now: Int64) throws {
        self.store = store
        self.now = now
        self.trusted = trusted
        self.document = document
        self.db = db
        documentRow = try store.insertingRowID(of: document, in: db)
        frontier = try store.frontier(of: documentRow, in: db)
        frontierBefore = frontier
        insert = try ChangeRowInserter(db)
        // A store with shared access reads the document's count once, so that an ingest into a document with none
        // waiting asks the pending table nothing (an exclusive store remembers whether any wait).
        if store.exclusiveCache == nil {
            waitingCount =
                try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT waiting FROM document WHERE id = ?"), arguments: [documentRow]) ?? 0
        }
        localIdentities = [store.localDevice.id, store.externalKey.id]
    }

    mutating func ingest(_ incoming: [EncodedChange], into result: inout IngestResult) throws {
        let appliedBefore = result.applied.count
        defer { if result.applied.count > appliedBefore { result.updatedDocuments.append(document) } }
        for encoded in incoming {
            let change = encoded.change
            try validateRanges(change)
            if change.id.seq <= frontier.vector[change.id.device] {
                let stored = try storedHash(of: change.id)
                if stored != change.hash {
                    if trusted { throw StoreError.identityReused(change, storedHash: stored, where: "in the log") }
                    // Another change under a logged identity, which no head can vouch for (its device signed the
                    // logged one, or a signed head naming this one made `vouch` throw): made up, so dropped.
                    result.rejected.append(
                        (
                            change.id,
                            "device \(change.id.device) seq \(change.id.seq) is in the log with another hash, and nothing its device signed vouches for this one"
                        ))
                    continue
                }
                result.duplicates += 1
                continue
            }
            try refuseLocalIdentity(change)
            guard trusted || vouched.contains(change.hash) else {
                // Nothing vouches for it yet: it waits for a head, as if for its own arrival.
                switch try park(encoded, waitingFor: change.id, vouched: false, into: &result) {
                case .parked:
                    result.unvouched.append(change.id)
                    hasWaiting = true
                case .alreadyWaiting:
                    result.duplicates += 1
                case .full:
                    result.turnedAway.append(change.id)
                }
                continue
            }
            if let dependency = try missingDependency(of: change, into: &result) {
                switch try park(encoded, waitingFor: dependency, vouched: true, into: &result) {
                case .parked:
                    result.deferred += 1
                    hasWaiting = true
                case .alreadyWaiting:
                    result.duplicates += 1
                case .full:
                    result.turnedAway.append(change.id)
                }
            } else {
                try stage(encoded, head: headsByHash[change.hash], incoming: true)
            }
        }
        if !advanced.isEmpty && mayHaveWaiting { try drainPending(into: &result) }
        try commitStaged(into: &result)
        if waitingDelta != 0 {
            try db.cachedStatement(sql: "UPDATE document SET waiting = max(0, waiting + ?) WHERE id = ?")
                .execute(arguments: [waitingDelta, documentRow])
        }
        try store.save(&frontier, of: document, hasWaiting: hasWaiting, in: db)
    }

    /// Whether changes of the document may wait in the pending table: an exclusive store remembers whether they do
    /// (a document it does not know has none), a shared one reads the document's count, so that an ingest into a
    /// document with none waiting costs no query of the table.
    var mayHaveWaiting: Bool {
        if hasWaiting == true || waitingDelta > 0 { return true }
        if let exclusiveCache = store.exclusiveCache {
            return exclusiveCache.document(documentRow)?.hasWaiting ?? false
        }
        return (waitingCount ?? 1) + waitingDelta > 0
    }

    /// The numbers of a change built in memory (decoded ones were checked by the codec) must be within
    /// ``ChangeLimits``.
    private func validateRanges(_ change: Change) throws {
        guard change.id.seq <= ChangeLimits.counter, change.lamport <= ChangeLimits.counter,
            change.vector.entries.allSatisfy({ $0.seq <= ChangeLimits.counter })
        else {
            throw StoreError(
                .invalidChange,
                "change \(change.id) has a sequence number, vector entry or lamport timestamp beyond the limit of \(ChangeLimits.counter)"
            )
        }
        guard change.parents.count <= ChangeLimits.parents else {
            throw StoreError(
                .invalidChange,
                "change \(change.id) names \(change.parents.count) parents, more than the limit of \(ChangeLimits.parents)"
            )
        }
    }

    /// Only this device makes changes in its own names, and it has all of them: one it lacks, or one that depends
    /// on one it lacks, was made up by someone else.
    private func refuseLocalIdentity(_ change: Change) throws {
        for identity in localIdentities where change.vector[identity] > frontier.vector[identity] {
            throw StoreError(
                .invalidChange,
                "change \(change.id) claims to follow change \(identity) seq \(change.vector[identity]), which this device (\(identity)) never made: refused"
            )
        }
    }

    /// A change of the change's past (the change itself excluded) that is not in the log; `nil` when it is ready.
    private func firstMissingDependency(of change: Change) -> ChangeID? {
        let device = change.id.device
        if change.id.seq > frontier.vector[device] + 1 { return ChangeID(device: device, seq: change.id.seq - 1) }
        for entry in change.vector.entries where entry.device != device && entry.seq > frontier.vector[entry.device] {
            return ChangeID(device: entry.device, seq: entry.seq)
        }
        return nil
    }

    /// The hash of the logged change with this identity (`nil` if the row is missing or its hash unreadable).
    func storedHash(of id: ChangeID) throws -> ChangeHash? {
        if let staged = stagedHashes[id] { return staged }
        // A duplicate of a device's latest change (a message delivered twice, usually) is checked against the frontier.
        if let tip = frontier.tips[id.device], tip.seq == id.seq { return tip.hash }
        guard let deviceRow = try store.rowID(of: id.device, in: db) else { return nil }
        // The statement the store's lookups by seq use (one fewer to prepare per connection); the body is left unread.
        let stored = try Data.fetchOne(
            db.cachedStatement(sql: ChangeLogStore.changeBySeq), arguments: [documentRow, deviceRow, Int64(id.seq)])
        return stored.flatMap { try? ColumnDecoder.changeHash($0) }
    }

    /// Stages a ready change vouched for (or trusted): it counts as in the log for what this ingestion examines
    /// next, and is written by ``commitStaged(into:)``.
    private mutating func stage(_ encoded: EncodedChange, head: SignedHead?, incoming: Bool) throws {
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
    private mutating func commitStaged(into result: inout IngestResult) throws {
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
                try store.keep(head, documentRow: documentRow, deviceRow: entry.deviceRow, in: db)
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
    private func writable() -> [Bool] {
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

    /// A change of the change's past that is not in the log, after staging the changes held for their head (see
    /// ``commitStaged(into:)``) that it needs and that are ready; `nil` when it is ready.
    private mutating func missingDependency(of change: Change, into result: inout IngestResult, depth: Int = 0)
        throws -> ChangeID?
    {
        while let dependency = firstMissingDependency(of: change) {
            guard depth < 64, mayHaveWaiting,
                try stageHeld(dependency.device, into: &result, depth: depth + 1)
            else { return dependency }
        }
        return nil
    }

    /// Stages `device`'s next change when it is held in the pending table and ready (staging first the held
    /// changes it needs); whether it did.
    private mutating func stageHeld(_ device: DeviceID, into result: inout IngestResult, depth: Int) throws -> Bool {
        guard let deviceRow = try store.rowID(of: device, in: db) else { return false }
        let seq = Int64(frontier.vector[device] + 1)
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT hash, body, head FROM pending
                    WHERE document = ? AND device = ? AND seq = ? AND vouched = 1 AND wait_device = ? AND wait_seq = ?
                    ORDER BY hash
                    """), arguments: [documentRow, deviceRow, seq, device.uuid.data, seq])
        for row in rows {
            let hash: Data = row[0]
            let body: Data = row[1]
            // One that no longer decodes is left to the drain, which drops it.
            guard !dropped.contains(hash),
                let encoded = try? EncodedChange(checking: [UInt8](body), document: document),
                encoded.change.hash.data == hash,
                try missingDependency(of: encoded.change, into: &result, depth: depth) == nil
            else { continue }
            try db.cachedStatement(
                sql: "DELETE FROM pending WHERE document = ? AND device = ? AND seq = ? AND hash = ?"
            ).execute(arguments: [documentRow, deviceRow, seq, hash])
            waitingDelta -= db.changesCount
            removedWaiting = true
            let head = (row[2] as Data?).flatMap { try? SignedHead(decoding: [UInt8]($0)) }
                .flatMap { $0.hash == encoded.change.hash ? $0 : nil }
            do {
                try stage(encoded, head: head, incoming: false)
                return true
            } catch let error as StoreError where error.code == .invalidChange {
                result.rejected.append((encoded.change.id, error.message))
            }
        }
        return false
    }

    /// Drops the waiting changes with the identity of `change`, just applied: they can never be, whatever they wait
    /// for.
    private mutating func dropWaiting(sameIdentityAs change: Change, deviceRow: Int64, into result: inout IngestResult)
        throws
    {
        let identity: StatementArguments = [documentRow, deviceRow, Int64(change.id.seq)]
        let others = try Data.fetchAll(
            db.cachedStatement(sql: "SELECT hash FROM pending WHERE document = ? AND device = ? AND seq = ?"),
            arguments: identity)
        guard !others.isEmpty else { return }
        for other in others {
            dropped.insert(other)
            // Its own copy waited too (it came again, vouched for or ready): gone without a word.
            if other == change.hash.data { continue }
            let otherHash = (try? ColumnDecoder.changeHash(other))?.shortHex ?? "another hash"
            result.rejected.append(
                (
                    change.id,
                    "device \(change.id.device) seq \(change.id.seq) waited with hash \(otherHash), but the change with hash \(change.hash.shortHex) took that identity; nothing was overwritten"
                ))
        }
        try db.cachedStatement(sql: "DELETE FROM pending WHERE document = ? AND device = ? AND seq = ?").execute(
            arguments: identity)
        waitingDelta -= db.changesCount
        removedWaiting = true
    }

    /// The rules ``CausalGraph/firstInconsistency(among:)`` checks when `verify` runs: parents in the log with lower
    /// lamport timestamps, at most ``ChangeLimits/lamportStep`` lower than the change's; the vector the parents'
    /// merged plus the change itself; made on its device's previous change. Only a device's very first change with
    /// no other device in its past may have no parent.
    private func validateHistory(_ change: Change) throws {
        if change.parents.isEmpty, change.vector.entries.count > 1 {
            throw StoreError(
                .invalidChange,
                "change \(change.id) names no parent but its vector \(change.vector) says it was made after other changes"
            )
        }
        var expected = VersionVector()
        var parentLamport: UInt64 = 0
        for parent in change.parents {
            guard let found = try lookUp(parent) else {
                throw StoreError(
                    .invalidChange,
                    "change \(change.id) names parent \(parent.shortHex), which is not in the log although everything in its vector is"
                )
            }
            guard change.vector.contains(found.id) else {
                throw StoreError(
                    .invalidChange, "change \(change.id) names parent \(found.id) outside its vector \(change.vector)")
            }
            guard found.lamport < change.lamport else {
                throw StoreError(
                    .invalidChange,
                    "change \(change.id) has lamport \(change.lamport), not above its parent \(found.id)'s \(found.lamport)"
                )
            }
            parentLamport = max(parentLamport, found.lamport)
            expected.merge(found.vector)
        }
        guard change.lamport <= ChangeLimits.maximumLamport(afterParentsAt: parentLamport) else {
            throw StoreError(
                .invalidChange,
                "change \(change.id) has lamport \(change.lamport), more than \(ChangeLimits.lamportStep) above its parents' \(parentLamport)"
            )
        }
        guard expected[change.id.device] == change.id.seq - 1 else {
            throw StoreError(
                .invalidChange,
                "change \(change.id) is not made on its device's previous change: its parents give \(expected)")
        }
        expected.include(change.id)
        guard expected == change.vector else {
            throw StoreError(
                .invalidChange, "change \(change.id) has vector \(change.vector), but its parents give \(expected)")
        }
    }

    private func lookUp(_ hash: ChangeHash) throws -> Change? {
        if let found = appliedNow[hash] { return found }
        // A parent is usually a device's latest change, which the frontier may keep decoded.
        if let kept = frontier.keptChange(hash) { return kept }
        return try store.fetchChange(hash, document: document, documentRow: documentRow, in: db)
    }

    private enum Parking { case parked, alreadyWaiting, full }

    /// Parks an early change in the pending table, noting one change it waits for, unless it waits there already
    /// or the document has as many waiting changes as the store allows. Another change with the same identity may
    /// wait beside it: which of them is real is known only when they are ready. An unvouched change must also fit
    /// within ``StoreLimits/unvouchedBytes``, for which unvouched changes of earlier calls may be evicted.
    private mutating func park(
        _ encoded: EncodedChange, waitingFor dependency: ChangeID, vouched: Bool, head named: SignedHead? = nil,
        into result: inout IngestResult
    ) throws -> Parking {
        let change = encoded.change
        let deviceRow = try store.insertingRowID(of: change.id.device, in: db)
        let key: StatementArguments = [documentRow, deviceRow, Int64(change.id.seq), change.hash.data]
        let head = (named ?? headsByHash[change.hash]).map { Data($0.encoded()) }
        if try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM pending WHERE document = ? AND device = ? AND seq = ? AND hash = ?"),
            arguments: key) == true
        {
            // Vouched for now, it may wait for what it lacks (the walk from the head found it here already,
            // unless the caller vouches for it).
            if vouched {
                try db.cachedStatement(
                    sql: """
                        UPDATE pending SET vouched = 1, head = coalesce(?, head), wait_device = ?, wait_seq = ?
                        WHERE document = ? AND device = ? AND seq = ? AND hash = ?
                        """
                ).execute(arguments: [head, dependency.device.uuid.data, Int64(dependency.seq)] + key)
            }
            return .alreadyWaiting
        }
        let count =
            try waitingCount ?? Int.fetchOne(
                db.cachedStatement(sql: "SELECT waiting FROM document WHERE id = ?"), arguments: [documentRow]) ?? 0
        waitingCount = count
        guard count + waitingDelta < store.limits.waitingChangesPerDocument else { return .full }
        if !vouched {
            let unvouched =
                try unvouchedCount ?? Int.fetchOne(
                    db.cachedStatement(
                        sql:
                            "SELECT count(*) FROM pending INDEXED BY pending_unvouched WHERE document = ? AND vouched = 0"
                    ),
                    arguments: [documentRow]) ?? 0
            guard unvouched < store.limits.unvouchedChangesPerDocument else { return .full }
            guard let evicted = try store.evictUnvouched(toFit: encoded.bytes.count, now: now, in: db) else {
                return .full
            }
            var evictedHere = 0
            if !evicted.isEmpty {
                // This document's count is written back with the frontier; the others' now.
                evictedHere = evicted[documentRow] ?? 0
                waitingDelta -= evictedHere
                if evictedHere > 0 { removedWaiting = true }
                try store.forgetWaiting(evicted.filter { $0.key != documentRow }, in: db)
                result.evicted += evicted.values.reduce(0, +)
            }
            unvouchedCount = unvouched - evictedHere + 1
        }
        try db.cachedStatement(
            sql: """
                INSERT INTO pending (document, device, seq, hash, body, wait_device, wait_seq, vouched, head, arrived, size)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(
            arguments: key + [
                Data(encoded.bytes), dependency.device.uuid.data, Int64(dependency.seq), vouched, head, now,
                encoded.bytes.count,
            ])
        waitingDelta += 1
        return .parked
    }

    /// Applies waiting changes that have become ready, until none is: each device whose changes were applied has
    /// the changes that wait for one of them re-examined; one still missing something waits for that instead.
    private mutating func drainPending(into result: inout IngestResult) throws {
        let select = try db.cachedStatement(
            sql: """
                SELECT device, seq, hash, body, vouched, head FROM pending INDEXED BY pending_by_dependency
                WHERE document = ? AND wait_device = ? AND wait_seq <= ?
                """)
        let remove = try db.cachedStatement(
            sql: "DELETE FROM pending WHERE document = ? AND device = ? AND seq = ? AND hash = ?")
        let rewait = try db.cachedStatement(
            sql: """
                UPDATE pending SET wait_device = ?, wait_seq = ? WHERE document = ? AND device = ? AND seq = ? AND hash = ?
                """)
        while let device = advanced.min() {
            advanced.remove(device)
            var candidates: [(deviceRow: Int64, hash: Data, change: EncodedChange, vouched: Bool, head: Data?)] = []
            var rows = try RawRows(select, arguments: [documentRow, device.uuid.data, Int64(frontier.vector[device])])
            var undecodable: [(deviceRow: Int64, seq: Int64, hash: Data, error: CodecError)] = []
            while let row = try rows.next() {
                let body: Data = row[3]
                do {
                    candidates.append(
                        (row[0], row[2], try EncodedChange(checking: [UInt8](body), document: document), row[4], row[5])
                    )
                } catch {
                    undecodable.append((row[0], row[1], row[2], error))
                }
            }
            // A waiting change whose bytes no longer decode (written by a build with looser limits, or damaged)
            // could never be applied: it goes, rather than failing every ingest that reaches it.
            for entry in undecodable {
                try remove.execute(arguments: [documentRow, entry.deviceRow, entry.seq, entry.hash])
                waitingDelta -= db.changesCount
                removedWaiting = true
                let id = ChangeID(
                    device: try store.device(forRow: entry.deviceRow, in: db), seq: UInt64(max(entry.seq, 1)))
                result.rejected.append((id, "its bytes cannot be decoded: \(entry.error)"))
            }
            candidates.sort {
                ($0.change.change.lamport, $0.change.change.id, $0.change.change.hash) < (
                    $1.change.change.lamport, $1.change.change.id, $1.change.change.hash
                )
            }
            for candidate in candidates {
                let change = candidate.change.change
                let key: StatementArguments = [documentRow, candidate.deviceRow, Int64(change.id.seq), candidate.hash]
                if dropped.contains(candidate.hash) { continue }
                if change.id.seq <= frontier.vector[change.id.device] {
                    // Taken already: by this very change (a duplicate), or by another with its identity, which won.
                    if try storedHash(of: change.id) != change.hash {
                        result.rejected.append(
                            (
                                change.id,
                                StoreError.identityReused(
                                    change, storedHash: try storedHash(of: change.id), where: "in the log"
                                ).message
                            ))
                    }
                    try remove.execute(arguments: key)
                    waitingDelta -= db.changesCount
                    removedWaiting = true
                } else if let dependency = try missingDependency(of: change, into: &result) {
                    try rewait.execute(arguments: [dependency.device.uuid.data, Int64(dependency.seq)] + key)
                } else if !candidate.vouched {
                    // Ready, but no head has reached it yet: it waits for one (see `vouch`).
                    try rewait.execute(arguments: [change.id.device.uuid.data, Int64(change.id.seq)] + key)
                } else {
                    try remove.execute(arguments: key)
                    waitingDelta -= db.changesCount
                    removedWaiting = true
                    do {
                        // Rows migrated from before changes in the local device's name were refused may claim it.
                        try refuseLocalIdentity(change)
                        let head = candidate.head.flatMap { try? SignedHead(decoding: [UInt8]($0)) }
                            .flatMap { $0.hash == change.hash ? $0 : nil }
                        try stage(candidate.change, head: head, incoming: false)
                    } catch let error as StoreError where error.code == .invalidChange {
                        // Dropped, not kept: an invalid change that waited must not block the document forever.
                        result.rejected.append((change.id, error.message))
                    }
                }
            }
        }
        if removedWaiting || hasWaiting == nil {
            hasWaiting =
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM pending WHERE document = ? LIMIT 1"),
                    arguments: [documentRow]) ?? false
        }
    }
}

extension StoreError {
    static func identityReused(_ change: Change, storedHash: ChangeHash?, where place: String) -> StoreError {
        let stored = storedHash.map { "hash \($0.shortHex)" } ?? "another hash"
        return StoreError(
            .integrity,
            "device \(change.id.device) seq \(change.id.seq) arrived with hash \(change.hash.shortHex), but \(place) it has \(stored): the device's identity was reused (a cloned or restored device); nothing was overwritten"
        )
    }
}
