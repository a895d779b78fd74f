import FolioCore
import Foundation

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

    /// Whether changes of this call were kept to wait (``deferred`` or ``unvouched``): new to the store, though not in
    /// its log yet.
    public var keptWaiting: Bool { deferred > 0 || !unvouched.isEmpty }

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
