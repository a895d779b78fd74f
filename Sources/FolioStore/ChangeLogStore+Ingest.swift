import FolioCore
import Foundation
import GRDB

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
    public func ingest(encoded changes: [EncodedChange], heads: [SignedHead]) throws(StoreError) -> IngestResult {
        try ingest(changes, heads: heads, trusted: false)
    }

    /// Adds changes from peers with the heads that vouch for them; the same as ``ingest(encoded:heads:)``.
    ///
    /// - Throws: ``StoreError``, as ``ingest(encoded:heads:)``.
    @discardableResult
    public func ingest(_ changes: [Change], heads: [SignedHead]) throws(StoreError) -> IngestResult {
        try ingest(changes.map(EncodedChange.init), heads: heads, trusted: false)
    }

    /// Adds changes whose authors the caller vouches for itself, without signed heads: a copy of this device's own
    /// backup, a trusted import, tests. Every other check of ``ingest(encoded:heads:)`` applies. Changes from a
    /// peer or a shared folder must go through ``ingest(encoded:heads:)``: here, anyone's name is taken at its word.
    ///
    /// - Throws: ``StoreError``, as ``ingest(encoded:heads:)``; `integrity` also when a change has the identity of a
    ///   logged change but another hash (a device identity reused by a cloned or restored device).
    @discardableResult
    public func ingest(trusting changes: [Change]) throws(StoreError) -> IngestResult {
        try ingest(changes.map(EncodedChange.init), heads: [], trusted: true)
    }

    /// ``ingest(trusting:)`` for changes with their encodings.
    ///
    /// - Throws: ``StoreError``, as ``ingest(encoded:heads:)``.
    @discardableResult
    public func ingest(trustingEncoded changes: [EncodedChange]) throws(StoreError) -> IngestResult {
        try ingest(changes, heads: [], trusted: true)
    }

    /// ``ingest(trustingEncoded:)`` that also keeps `heads` (which the caller vouches for, as for the changes) with
    /// the changes they name, to pass on with them (``signedHeads(of:since:signingOwn:)``): a copy of a log another
    /// store checked, such as the server's copy of a log kept in another database.
    ///
    /// - Throws: ``StoreError``, as ``ingest(encoded:heads:)``.
    @discardableResult
    package func ingest(trustingEncoded changes: [EncodedChange], keeping heads: [SignedHead]) throws(StoreError)
        -> IngestResult
    {
        try ingest(changes, heads: heads, trusted: true)
    }

    private func ingest(_ changes: [EncodedChange], heads: [SignedHead], trusted: Bool) throws(StoreError)
        -> IngestResult
    {
        guard !changes.isEmpty else { return IngestResult() }
        let byDocument = Dictionary(grouping: changes, by: \.change.document)
        let headsByDocument = Dictionary(grouping: heads, by: \.document)
        // The arrival time of the changes that wait, read once.
        let now = clock.now().millisecondsSince1970
        let (result, added) = try write("ingesting \(changes.count) changes") { db in
            var result = IngestResult()
            var added: [(documentRow: Int64, document: DocumentID, count: Int)] = []
            result.expired = try expireUnvouched(now: now, in: db)
            for (document, documentChanges) in byDocument.sorted(by: { $0.key < $1.key }) {
                let incoming = documentChanges.sorted {
                    ($0.change.lamport, $0.change.id) < ($1.change.lamport, $1.change.id)
                }
                var ingestion = try Ingestion(store: self, document: document, db: db, trusted: trusted, now: now)
                if !trusted {
                    try ingestion.vouch(with: headsByDocument[document] ?? [], for: incoming, into: &result)
                } else {
                    // Heads the caller vouches for are kept with the changes they name.
                    for head in headsByDocument[document] ?? [] { ingestion.headsByHash[head.hash] = head }
                }
                let before = result.applied.count
                try ingestion.ingest(incoming, into: &result)
                if result.applied.count > before {
                    added.append((ingestion.documentRow, document, result.applied.count - before))
                }
            }
            return (result, added)
        }
        foldIfDue(added)
        return result
    }
}
