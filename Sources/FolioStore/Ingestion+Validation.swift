import FolioCore
import Foundation
import GRDB

/// The checks a change passes before it enters the log: numbers within ``ChangeLimits``, nothing in this device's
/// own names that it lacks, and a history that `verify` finds sound.
extension Ingestion {
    /// The numbers of a change built in memory (decoded ones were checked by the codec) must be within
    /// ``ChangeLimits``.
    func validateRanges(_ change: Change) throws {
        guard change.id.seq <= ChangeLimits.counter, change.lamport <= ChangeLimits.counter,
            change.vector.entries.allSatisfy({ $0.seq <= ChangeLimits.counter })
        else {
            throw StoreError(
                .invalidChange,
                "change \(change.id) has a sequence number, vector entry or lamport timestamp beyond the limit of \(ChangeLimits.counter)"
            )
        }
        guard change.blobs.count <= store.limits.blobsPerChange else {
            throw StoreError(
                .invalidChange,
                "change \(change.id) refers to \(change.blobs.count) blobs, more than the limit of \(store.limits.blobsPerChange)"
            )
        }
        if let blob = change.blobs.first(where: { $0.size > store.limits.blobBytes }) {
            throw StoreError(
                .invalidChange,
                "change \(change.id) refers to a \(blob), larger than the limit of \(store.limits.blobBytes) bytes")
        }
        guard change.parents.count <= ChangeLimits.parents else {
            throw StoreError(
                .invalidChange,
                "change \(change.id) names \(change.parents.count) parents, more than the limit of \(ChangeLimits.parents)"
            )
        }
    }

    /// Only this device makes changes in its own names, and it has all of them: one it lacks, or one that depends
    /// on one it lacks, was made up by someone else. The exception are those it removed with the document's local
    /// copy, up to the head it signed then (``removedOwn``), which a head of its own must vouch for as for a peer's.
    func refuseLocalIdentity(_ change: Change) throws {
        for identity in localIdentities
        where change.vector[identity] > max(frontier.vector[identity], removedOwn[identity]?.change.seq ?? 0) {
            throw StoreError(
                .invalidChange,
                "change \(change.id) claims to follow change \(identity) seq \(change.vector[identity]), which this device (\(identity)) never made: refused"
            )
        }
    }

    /// The rules ``CausalGraph/firstInconsistency(among:)`` checks when `verify` runs: parents in the log with lower
    /// lamport timestamps, at most ``ChangeLimits/lamportStep`` lower than the change's; the vector the parents'
    /// merged plus the change itself; made on its device's previous change. Only a device's very first change with
    /// no other device in its past may have no parent.
    func validateHistory(_ change: Change) throws {
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

    func lookUp(_ hash: ChangeHash) throws -> Change? {
        if let found = appliedNow[hash] { return found }
        // A parent is usually a device's latest change, which the frontier may keep decoded.
        if let kept = frontier.keptChange(hash) { return kept }
        return try store.fetchChange(hash, document: document, documentRow: documentRow, in: db)
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
