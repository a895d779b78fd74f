import FolioCore
import FolioStore
import FolioSync
import Foundation

/// Blobs on the server: it asks a device for the blobs of the changes it sent that the log lacks, answers a device's
/// asking with those the log holds, and sends a blob it lacked when asked to the devices that asked, once it comes.
/// Each blob thus crosses to the server once and from it only to devices that lack it.
extension ServedLibrary {
    /// The most blobs the server remembers a connection asked for and the log lacked; past it, an asking for more
    /// is answered with what the log holds, and the device asks again in a later session.
    static var blobsWantedPerConnection: Int { 4_096 }

    /// Answers `connection`'s asking: the blobs the log holds are sent one message at a time as the device reads
    /// them (``sendOwedBlobs(to:)``), so that what a device asks for costs the server one message of memory; those
    /// it lacks are named lacking at once, and sent when they arrive. Past ``blobsWantedPerConnection`` owed or
    /// wanted, a blob is named lacking (the device asks again in a later session).
    ///
    /// A connection that may sync single documents is sent only the blobs their changes refer to: any other is named
    /// lacking, as if the log did not hold it, and never sent.
    func answer(_ references: [BlobReference], on channel: UInt64, of connection: Connection) {
        let lacking: [BlobReference]
        var hidden: Set<BlobReference> = []
        do {
            lacking = try log.lacking(references)
            if connection.isScoped {
                let visible = try log.blobs(references, referencedBy: connection.scope.documents)
                hidden = Set(references).subtracting(visible)
            }
        } catch {
            return fail(connection, "looking for the blobs a device asked for", error)
        }
        let absent = Set(lacking).subtracting(hidden)
        var owed = Set(connection.blobsOwed.filter { $0.channel == channel }.map(\.reference))
        var named: [BlobReference] = []
        // A blob owed already (asked again before it was sent) is sent once.
        for reference in references where !owed.contains(reference) {
            if hidden.contains(reference) {
                named.append(reference)
            } else if absent.contains(reference) {
                if connection.blobsWanted.count < Self.blobsWantedPerConnection {
                    connection.blobsWanted[reference] = channel
                }
                named.append(reference)
            } else if connection.blobsOwed.count < Self.blobsWantedPerConnection,
                reference.size <= SyncMessage.Limits.blobMessageBytes
            {
                connection.blobsOwed.append((reference, channel))
                owed.insert(reference)
            } else {
                named.append(reference)
            }
        }
        if !named.isEmpty { perform([.send(.blobs([], lacking: named))], on: channel, of: connection) }
        sendOwedBlobs(to: connection)
    }

    /// ``sendOwedBlobs(to:)`` for connection `id`, if it is still open.
    func sendOwedBlobs(toConnection id: UInt64) {
        guard let connection = connections[id] else { return }
        sendOwedBlobs(to: connection)
    }

    /// Sends the next message of blobs `connection` is owed once its outbox has room, and goes on as it drains.
    func sendOwedBlobs(to connection: Connection) {
        guard !connection.blobsOwed.isEmpty, connections[connection.id] != nil, !connection.outbox.hasEnded else {
            return
        }
        guard !connection.outbox.isBusy, connection.deferred.isEmpty else {
            let id = connection.id
            connection.outbox.whenDrained { Task { await self.sendOwedBlobs(toConnection: id) } }
            return
        }
        let channel = connection.blobsOwed[0].channel
        var blobs: [Data] = []
        var lacking: [BlobReference] = []
        var bytes = 0
        while let next = connection.blobsOwed.first, next.channel == channel,
            blobs.count + lacking.count < SyncMessage.Limits.wantedBlobs,
            blobs.isEmpty || bytes + next.reference.size <= SyncMessage.Limits.blobMessageBytes
        {
            connection.blobsOwed.removeFirst()
            // A blob that cannot be read (damaged, or collected meanwhile) is named lacking.
            let found = try? log.blobs([next.reference])[next.reference]
            if let found {
                blobs.append(found)
                bytes += found.count
            } else {
                lacking.append(next.reference)
            }
        }
        metrics.blobsOut.increment(by: Int64(blobs.count))
        send(.blobs(blobs, lacking: lacking), on: channel, to: connection)
        if !connection.blobsOwed.isEmpty { sendOwedBlobs(to: connection) }
    }

    /// Stores the blobs `connection` sent (those a change of the log refers to; the rest are refused and dropped;
    /// from a connection of single documents, those a change of a document it writes refers to), within the
    /// library's quota (past it, 4413), and sends each to the connections that asked for it. Returns the blobs'
    /// references.
    @discardableResult
    func store(_ blobs: [Data], size: Int, from connection: Connection) -> [BlobReference] {
        let references = blobs.map(BlobReference.init(to:))
        var blobs = blobs
        if connection.isScoped {
            do {
                let writable = try log.blobs(references, referencedBy: connection.scope.writableDocuments)
                blobs = zip(references, blobs).filter { writable.contains($0.0) }.map(\.1)
            } catch {
                fail(connection, "looking up the documents of blobs", error)
                return references
            }
            guard !blobs.isEmpty else { return references }
        }
        do {
            knownSize = (try log.byteSize(), ContinuousClock.now)
            bytesSinceSized = 0
        } catch {
            fail(connection, "checking the library's quota", error)
            return references
        }
        guard knownSize!.bytes + size <= limits.libraryQuota else {
            refuse(
                connection, code: 4413,
                "the library is over its storage quota (\(knownSize!.bytes) bytes and \(size) more; at most \(limits.libraryQuota))"
            )
            return references
        }
        let intake: BlobIntake
        do { intake = try log.storeBlobs(blobs) } catch {
            fail(connection, "storing blobs", error)
            return references
        }
        metrics.blobsIn.increment(by: Int64(intake.stored.count))
        guard !intake.stored.isEmpty else { return references }
        let arrived = Dictionary(zip(references, blobs), uniquingKeysWith: { first, _ in first })
        for id in connections.keys.sorted() {
            guard let waiting = connections[id], !waiting.blobsWanted.isEmpty else { continue }
            var byChannel: [UInt64: [Data]] = [:]
            for reference in intake.stored {
                guard let channel = waiting.blobsWanted.removeValue(forKey: reference) else { continue }
                byChannel[channel, default: []].append(arrived[reference]!)
            }
            for channel in byChannel.keys.sorted() {
                let messages = SyncMessage.blobMessages(byChannel[channel]!)
                metrics.blobsOut.increment(by: Int64(messages.reduce(0) { $0 + $1.blobCount }))
                perform(messages.map { .send($0) }, on: channel, of: waiting)
            }
        }
        return references
    }

    /// Asks each connection whose changes a batch stored for the blobs they refer to that the log lacks, on the
    /// channel of the session that sent them.
    func askForBlobs(of stored: [Arrival]) {
        struct Asker: Hashable, Comparable {
            var connection: UInt64
            var channel: UInt64
            static func < (a: Asker, b: Asker) -> Bool { (a.connection, a.channel) < (b.connection, b.channel) }
        }
        var byAsker: [Asker: [BlobReference]] = [:]
        for arrival in stored {
            let references = arrival.changes.flatMap(\.change.blobs)
            guard !references.isEmpty else { continue }
            byAsker[Asker(connection: arrival.connection, channel: arrival.channel), default: []] += references
        }
        for asker in byAsker.keys.sorted() {
            guard let connection = connections[asker.connection], let references = byAsker[asker] else { continue }
            let channel = asker.channel
            let lacking: [BlobReference]
            do { lacking = try log.lacking(Array(Set(references)).sorted()) } catch {
                return fail(connection, "looking for the blobs of stored changes", error)
            }
            guard !lacking.isEmpty else { continue }
            var start = 0
            while start < lacking.count {
                let part = Array(lacking[start..<min(start + SyncMessage.Limits.wantedBlobs, lacking.count)])
                asked(part, on: channel, of: connection)
                perform([.send(.wantBlobs(part))], on: channel, of: connection)
                start += part.count
            }
        }
    }
}

extension SyncMessage {
    /// The number of blobs a ``blobs(_:)`` message holds (0 for the others).
    var blobCount: Int {
        if case .blobs(let blobs, _) = self { return blobs.count }
        return 0
    }
}
