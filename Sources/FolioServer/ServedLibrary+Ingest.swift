import FolioCore
import FolioStore
import FolioSync
import Logging

/// Changes from every connection, ingested together in batches: quotas, the log's answer, and what each batch
/// stored announced and passed on.
extension ServedLibrary {
    func drainScheduledBatch() {
        drainScheduled = false
        drain()
    }

    /// Ingests every waiting `changes` message in one transaction; when that fails, connection by connection, so
    /// that one device's refused change does not hold back another's (its connection is closed).
    func drain() {
        guard !arrivals.isEmpty else { return }
        var batch = arrivals
        arrivals = []
        // What the batch held is no longer in flight, whatever becomes of it.
        for arrival in batch {
            budget.release(arrival.bytes)
            connections[arrival.connection]?.inFlight -= arrival.bytes
        }
        // Authors must not belong to another library; they are bound to this one once their changes are stored.
        var byConnection: [UInt64: [DeviceID]] = [:]
        for arrival in batch {
            byConnection[arrival.connection, default: []] += arrival.changes.map(\.change.id.device)
        }
        for id in byConnection.keys.sorted() {
            guard let connection = connections[id] else { continue }
            if !admissible(byConnection[id]!, on: connection) { batch.removeAll { $0.connection == id } }
        }
        batch = withinQuota(batch)
        guard !batch.isEmpty else { return }
        metrics.ingestBatches.increment()
        // The documents' vectors before the batch: what it stored is what they gained.
        var before: [DocumentID: VersionVector] = [:]
        do {
            for document in Set(batch.map(\.document)) { before[document] = try log.vector(of: document) }
        } catch {
            return failAll(batch, "reading a vector before a batch", error)
        }
        var stored: [Arrival] = []
        var refusedHeads: [(head: ChangeID, reason: String)] = []
        var applied = 0
        do {
            let result = try log.ingest(batch.flatMap(\.changes), heads: batch.flatMap(\.heads))
            applied = result.applied.count
            refusedHeads = result.refusedHeads
            stored = batch
        } catch {
            var ids: [UInt64] = []
            for arrival in batch where !ids.contains(arrival.connection) { ids.append(arrival.connection) }
            for id in ids {
                let own = batch.filter { $0.connection == id }
                do {
                    let result = try log.ingest(own.flatMap(\.changes), heads: own.flatMap(\.heads))
                    applied += result.applied.count
                    refusedHeads += result.refusedHeads
                    stored += own
                } catch {
                    refuseIngest(own, error)
                }
            }
        }
        metrics.changesIn.increment(by: Int64(applied))
        // A head that does not check closes the connection that sent it (what else it brought is stored).
        for refused in refusedHeads {
            for arrival in stored where arrival.heads.contains(where: { $0.change == refused.head }) {
                guard let connection = connections[arrival.connection] else { continue }
                refuse(connection, code: 1008, "a signed head does not check: \(refused.reason)")
            }
        }
        // The documents' vectors after the batch.
        var vectors: [DocumentID: VersionVector] = [:]
        for document in Set(stored.map(\.document)).sorted() {
            do { vectors[document] = try log.vector(of: document) } catch {
                return failAll(stored, "reading a vector after a batch", error)
            }
        }
        if applied > 0 { summary = nil }
        // What each document gained, the changes themselves, and who wrote them.
        var gained: [DocumentID: (changes: [EncodedChange], heads: [SignedHead])] = [:]
        for document in vectors.keys.sorted() where vectors[document] != before[document] {
            documents?.insert(document)
            do {
                gained[document] = try storedChanges(
                    of: document, before: before[document]!, after: vectors[document]!, in: stored)
            } catch {
                return failAll(stored, "reading the changes a batch stored", error)
            }
        }
        let authors = Set(gained.values.flatMap { $0.changes.map(\.change.id.device) })
        bind(authors)
        // A device that wrote through its own connection proved its key there: its name is recorded. The arrival
        // itself must bring a change of the device that the batch stored (another connection's changes of the same
        // document prove nothing of this one).
        for arrival in stored {
            guard let connection = connections[arrival.connection], !connection.proven, connection.writes,
                let device = connection.device, authors.contains(device.id),
                let storedHashes = gained[arrival.document].map({ Set($0.changes.map(\.change.hash)) }),
                arrival.changes.contains(where: {
                    $0.change.id.device == device.id && storedHashes.contains($0.change.hash)
                })
            else { continue }
            connection.proven = true
            recordName(of: device, provenOn: connection)
        }
        // Each sender is asked for the blobs its changes refer to that the log lacks, before its session hears that
        // they are stored (which may end it).
        askForBlobs(of: stored)
        // Each sender's session learns what it now holds.
        for arrival in stored {
            guard let connection = connections[arrival.connection], connection.finishedPeers[arrival.channel] == nil,
                var session = connection.sessions[arrival.channel]
            else { continue }
            let wasFinished = session.isFinished
            let actions = session.ingested(arrival.document, vector: vectors[arrival.document]!)
            connection.sessions[arrival.channel] = session
            perform(actions, on: arrival.channel, of: connection)
            if !wasFinished, session.isFinished { finished(arrival.channel, of: connection) }
        }
        announce(gained, vectors: vectors) { document in
            // A device that alone sent a document's changes of this batch has them.
            let origins = Set(stored.filter { $0.document == document }.map(\.connection))
            return origins.count == 1 ? origins.first : nil
        }
    }

    /// Every device hears of what grew (a notice of each document's vector); the others get the changes stored,
    /// never the bytes received: all but the connection `origin` names for a document, which sent them. A connection
    /// hears only of the documents its scope includes.
    func announce(
        _ gained: [DocumentID: (changes: [EncodedChange], heads: [SignedHead])],
        vectors: [DocumentID: VersionVector], origin: (DocumentID) -> UInt64?
    ) {
        let listeners = connections.keys.sorted().compactMap { connections[$0] }.filter { $0.liveChannel != nil }
        var splitter = SyncSession(device: log.device, id: 0, role: .responder, vectors: [:])
        for document in gained.keys.sorted() {
            let (changes, heads) = gained[document]!
            let messages = splitter.fetched(changes, heads: heads, of: document).compactMap { action in
                if case .send(let message) = action { message.encoded() } else { nil }
            }
            let sender = origin(document)
            for listener in listeners where listener.id != sender && listener.scope.includes(document) {
                for message in messages {
                    let frame = SyncFrame.message(channel: listener.liveChannel!, bytes: message).encoded()
                    metrics.bytesOut.increment(by: Int64(frame.count))
                    listener.outbox.send(frame)
                }
                metrics.changesOut.increment(by: Int64(changes.count))
            }
        }
        // An empty vector (a `changes` message of nothing, for a document the log lacks) says nothing: no notice.
        for document in vectors.keys.sorted() where !vectors[document]!.isEmpty {
            let notice = SyncFrame.notice(document: document, vector: vectors[document]!).encoded()
            for listener in listeners where listener.scope.includes(document) {
                metrics.bytesOut.increment(by: Int64(notice.count))
                listener.outbox.send(notice)
            }
        }
    }

    /// Takes what other server processes stored in the log since this one last looked (``ServerLog/catchUp()``)
    /// and passes it on to this process's devices, as if its own connections had sent it.
    func absorbStoredElsewhere() {
        absorbScheduled = false
        let grown: [DocumentID: VersionVector]
        do { grown = try log.catchUp() } catch {
            logger.warning(
                "cannot read what other servers stored",
                metadata: ["library": .string(name), "error": .string("\(error)")])
            return
        }
        guard !grown.isEmpty else { return }
        summary = nil
        var gained: [DocumentID: (changes: [EncodedChange], heads: [SignedHead])] = [:]
        var vectors: [DocumentID: VersionVector] = [:]
        do {
            for (document, before) in grown.sorted(by: { $0.key < $1.key }) {
                documents?.insert(document)
                vectors[document] = try log.vector(of: document)
                gained[document] = try log.changes(of: document, since: before)
            }
        } catch {
            logger.warning(
                "cannot read what other servers stored",
                metadata: ["library": .string(name), "error": .string("\(error)")])
            return
        }
        announce(gained, vectors: vectors) { _ in nil }
    }

    /// The changes of `document` a batch stored (those above `before`), in causal order, with heads that vouch for
    /// them: the batch's own when its messages hold them all, otherwise read from the log (changes that waited for
    /// the batch were stored with it).
    func storedChanges(
        of document: DocumentID, before: VersionVector, after: VersionVector, in batch: [Arrival]
    ) throws -> (changes: [EncodedChange], heads: [SignedHead]) {
        var expected = 0
        for device in after.devices { expected += Int(after[device] - min(after[device], before[device])) }
        var seen = Set<ChangeID>()
        var changes: [EncodedChange] = []
        var heads: [SignedHead] = []
        for arrival in batch where arrival.document == document {
            for change in arrival.changes where !before.contains(change.change.id) && after.contains(change.change.id) {
                guard seen.insert(change.change.id).inserted else {
                    return try log.changes(of: document, since: before)
                }
                changes.append(change)
            }
            heads += arrival.heads.filter { seen.contains($0.change) }
        }
        guard changes.count == expected else { return try log.changes(of: document, since: before) }
        // A change the batch stored through a head whose own change waits (for a dependency) has no head here: it
        // would wait unvouched on the devices; it reaches them with that head's change instead (or from the log).
        var reach: [DeviceID: UInt64] = [:]
        for head in heads { reach[head.change.device] = max(reach[head.change.device] ?? 0, head.change.seq) }
        return (changes.filter { $0.change.id.seq <= reach[$0.change.id.device] ?? 0 }, heads)
    }

    /// The arrivals of `batch` the library's quotas leave: a connection whose messages would take the log past
    /// ``ServerLimits/libraryQuota`` bytes or ``ServerLimits/documentsPerLibrary`` documents is closed (4413).
    func withinQuota(_ batch: [Arrival]) -> [Arrival] {
        guard !batch.isEmpty else { return batch }
        do {
            // The log's size is read at most once a second, unless what arrived since could take it past the quota.
            let incoming = batch.reduce(0) { $0 + $1.bytes }
            let now = ContinuousClock.now
            if let known = knownSize, now - known.at < .seconds(1),
                known.bytes + bytesSinceSized + incoming <= limits.libraryQuota
            {
                bytesSinceSized += incoming
            } else {
                knownSize = (try log.byteSize(), now)
                bytesSinceSized = incoming
            }
            let size = knownSize!.bytes
            if size > limits.libraryQuota {
                for id in Set(batch.map(\.connection)).sorted() {
                    guard let connection = connections[id] else { continue }
                    refuse(
                        connection, code: 4413,
                        "the library is over its storage quota (\(size) bytes; at most \(limits.libraryQuota))")
                }
                return []
            }
            if documents == nil { _ = try currentSummary() }
        } catch {
            failAll(batch, "checking the library's quota", error)
            return []
        }
        var kept: [Arrival] = []
        var known = documents ?? []
        var refused = Set<UInt64>()
        for arrival in batch {
            guard !refused.contains(arrival.connection) else { continue }
            if !known.contains(arrival.document) {
                guard known.count < limits.documentsPerLibrary else {
                    refused.insert(arrival.connection)
                    if let connection = connections[arrival.connection] {
                        refuse(
                            connection, code: 4413,
                            "the library holds as many documents as its quota allows (\(limits.documentsPerLibrary))")
                    }
                    continue
                }
                known.insert(arrival.document)
            }
            kept.append(arrival)
        }
        return kept.filter { !refused.contains($0.connection) }
    }

    /// Closes the connections of `arrivals`, whose changes `error` refused: 1008 when the changes broke a rule,
    /// 1011 when the storage failed.
    func refuseIngest(_ arrivals: [Arrival], _ error: any Error) {
        let storageFailed = (error as? StoreError).map { ![.integrity, .invalidChange].contains($0.code) } ?? true
        for id in Set(arrivals.map(\.connection)).sorted() {
            guard let connection = connections[id] else {
                logger.warning("changes refused", metadata: ["library": .string(name), "error": .string("\(error)")])
                continue
            }
            if storageFailed {
                fail(connection, "storing changes", error)
            } else {
                refuse(connection, code: 1008, "a change was refused: \(error)")
            }
        }
    }

    /// Closes the connections of `arrivals` because the storage failed (1011).
    func failAll(_ arrivals: [Arrival], _ action: String, _ error: any Error) {
        for id in Set(arrivals.map(\.connection)).sorted() {
            if let connection = connections[id] { fail(connection, action, error) }
        }
    }
}
