import FolioCore
import FolioStore
import Foundation

/// Blobs in a session: after changes arrive, a driver asks the peer for the blobs they refer to that its store
/// lacks (``SyncMessage/wantBlobs(_:)``), each once a session; it answers the peer's asking with the blobs it holds
/// and names those it lacks (``SyncMessage/blobs(_:lacking:)``); and it stores the blobs that arrive, each checked
/// against its reference and kept only when a change of its log refers to it. A blob thus crosses only to a peer
/// that lacks it. The exchange is not finished (``isFinished``) while an asking is unanswered; a timeout asks
/// again, up to ``blobAskAttempts`` times.
extension SyncDriver {
    /// How many times an unanswered asking for blobs is sent before the driver stops waiting for it.
    public static var blobAskAttempts: Int { 4 }

    /// Asks the peer for the blobs that changes of `document` (of every document, when `nil`) refer to and the
    /// store lacks, those not asked before in this session; at most ``SyncMessage/Limits/wantedBlobs`` per message.
    mutating func askForMissingBlobs(of document: DocumentID?) throws(SyncError) -> [[UInt8]] {
        let missing: [BlobReference]
        do {
            missing = try store.missingBlobs(of: document, limit: blobsAsked.count + SyncMessage.Limits.wantedBlobs)
        } catch {
            throw .store(error, while: "listing the blobs this store lacks")
        }
        let wanted = missing.filter { !blobsAsked.contains($0) }.prefix(SyncMessage.Limits.wantedBlobs)
        guard !wanted.isEmpty else { return [] }
        blobsAsked.formUnion(wanted)
        blobsAwaited.formUnion(wanted)
        report.blobsAsked += wanted.count
        return try send([.wantBlobs(Array(wanted))])
    }

    /// Asks again for the blobs asked for and not answered (a message may have been lost), until
    /// ``blobAskAttempts`` askings went unanswered; then stops waiting, and says so in the report.
    mutating func askAgainForAwaitedBlobs() throws(SyncError) -> [[UInt8]] {
        guard !blobsAwaited.isEmpty else { return [] }
        // Answers still coming (large blobs take more than a timeout): nothing is asked again.
        guard !blobAnswerSinceTick else {
            blobAnswerSinceTick = false
            blobAskRetries = 0
            return []
        }
        blobAskRetries += 1
        guard blobAskRetries < Self.blobAskAttempts else {
            report.problems.append("the peer did not answer for \(blobsAwaited.count) blobs asked for")
            blobsAwaited = []
            blobAskRetries = 0
            return []
        }
        let awaited = blobsAwaited.sorted()
        var messages: [SyncMessage] = []
        var start = 0
        while start < awaited.count {
            let end = min(start + SyncMessage.Limits.wantedBlobs, awaited.count)
            messages.append(.wantBlobs(Array(awaited[start..<end])))
            start = end
        }
        return try send(messages)
    }

    /// The most bytes of blobs one asking is answered with; the blobs past it are named lacking, and the peer asks
    /// for them again in a later session. 64 MiB.
    public static var blobAnswerBytes: Int { 64 << 20 }

    /// Answers the peer's asking with the blobs the store holds, in messages of at most
    /// ``SyncMessage/Limits/blobMessageBytes``, at most ``blobAnswerBytes`` in all; the others (lacking here, larger
    /// than a message, or past that bound) are named lacking.
    mutating func answer(_ references: [BlobReference]) throws(SyncError) -> [[UInt8]] {
        var admitted: [BlobReference] = []
        var lacking: [BlobReference] = []
        var bytes = 0
        var seen: Set<BlobReference> = []
        for reference in references where seen.insert(reference).inserted {
            if reference.size <= SyncMessage.Limits.blobMessageBytes, bytes + reference.size <= Self.blobAnswerBytes {
                admitted.append(reference)
                bytes += reference.size
            } else {
                lacking.append(reference)
            }
        }
        // Read in one go; when a blob cannot be read (damaged in the store), one by one, and that one is named
        // lacking: the session goes on.
        var held = (try? store.blobs(admitted)) ?? [:]
        if held.isEmpty, !admitted.isEmpty {
            for reference in admitted { held[reference] = try? store.blobs([reference])[reference] }
        }
        let found = admitted.compactMap { held[$0] }
        lacking += admitted.filter { held[$0] == nil }
        let messages = SyncMessage.blobMessages(found, lacking: lacking)
        report.blobsSent += messages.reduce(0) { count, message in
            guard case .blobs(let blobs, _) = message else { return count }
            return count + blobs.count
        }
        return try send(messages)
    }

    /// Stores the blobs that arrived, and asks for more when they were the answer to an asking that was cut short.
    mutating func take(_ blobs: [Data], lacking: [BlobReference]) throws(SyncError) -> [[UInt8]] {
        for blob in blobs { blobsAwaited.remove(BlobReference(to: blob)) }
        blobsAwaited.subtract(lacking)
        blobAnswerSinceTick = !blobsAwaited.isEmpty
        if blobsAwaited.isEmpty { blobAskRetries = 0 }
        let intake: BlobIntake
        do {
            intake = try store.storeBlobs(blobs)
        } catch {
            throw .store(error, while: "storing \(blobs.count) blobs from the peer")
        }
        report.blobsReceived += intake.stored.count
        if !intake.refused.isEmpty {
            report.problems.append(
                "\(intake.refused.count) blobs from the peer were refused: nothing here refers to them")
        }
        for document in intake.documents {
            report.noteUpdated(document)
            updatedSinceTaken.insert(document)
        }
        // Once every blob asked for is answered (held or lacking), the next ones missing are asked for: a store that
        // lacks many blobs gets them all over the session, whatever the peer lacks.
        return blobsAwaited.isEmpty ? try askForMissingBlobs(of: nil) : []
    }

    private mutating func send(_ messages: [SyncMessage]) throws(SyncError) -> [[UInt8]] {
        report.messagesSent += messages.count
        return messages.map { $0.encoded(format: writtenFormat) }
    }
}

extension SyncMessage {
    /// `blobs` as ``blobs(_:lacking:)`` messages of at most ``Limits/blobMessageBytes`` and
    /// ``Limits/wantedBlobs`` blobs each, in order, the last naming `lacking` (and any blob larger than a message,
    /// which is not sent): at least one message.
    public static func blobMessages(_ blobs: [Data], lacking: [BlobReference] = []) -> [SyncMessage] {
        var messages: [SyncMessage] = []
        var current: [Data] = []
        var bytes = 0
        let oversized = blobs.filter { $0.count > Limits.blobMessageBytes }.map(BlobReference.init(to:))
        let lacking = (lacking + oversized).sorted()
        for blob in blobs where blob.count <= Limits.blobMessageBytes {
            if !current.isEmpty, bytes + blob.count > Limits.blobMessageBytes || current.count == Limits.wantedBlobs {
                messages.append(.blobs(current, lacking: []))
                current = []
                bytes = 0
            }
            current.append(blob)
            bytes += blob.count
        }
        var start = 0
        repeat {
            let end = min(start + Limits.wantedBlobs, lacking.count)
            messages.append(.blobs(current, lacking: Array(lacking[start..<end])))
            current = []
            start = end
        } while start < lacking.count
        return messages
    }
}
