import FolioCore
import FolioSync

/// Presence: what each device shows the others of itself in a document (its cursor and selection), relayed between
/// the library's connections as opaque bytes and kept in memory only, the latest state per connection and document.
///
/// Presence never reaches the log, a file, the server's log lines or a session: it is the latest state of something
/// that changes many times a second, worth sending only while it is current. So it is bounded and dropped rather than
/// queued: a sender past ``ServerLimits/presencePerSecond`` or ``ServerLimits/presenceDocuments`` has the frame
/// dropped, and a recipient behind in reading (its queue busy, ``Outbox/offer(_:)``) misses it; the next state
/// replaces it anyway. Only a connection whose client said at the upgrade that it reads presence (`Folio-Presence: 1`)
/// is sent any: an older client would refuse an unknown frame kind.
extension ServedLibrary {
    /// A connection's presence: whether its client reads the others', and the states its device shows through it.
    struct Presence {
        /// Whether the client reads presence frames.
        let reads: Bool
        /// The latest state the device showed in each document, never empty (an empty state removes it).
        var states: [DocumentID: [UInt8]] = [:]
        /// The bytes of ``states``, counted in the server's memory budget.
        var bytes = 0
        /// The pace of the connection's presence frames.
        var bucket: TokenBucket

        init(reads: Bool, perSecond: Int) {
            self.reads = reads
            bucket = TokenBucket(perSecond: perSecond)
        }
    }

    /// Handles a presence frame from connection `id`: `device` shows `state` in `document` (nothing, when empty).
    ///
    /// Closes the connection before its hello (1002), when `device` is not the hello's (1008), or when the state is
    /// larger than ``ServerLimits/presenceBytes`` (1009). Drops the frame (counted) past the connection's rate, or
    /// when it would show a state in more than ``ServerLimits/presenceDocuments`` documents. Otherwise keeps the state
    /// in place of the connection's previous one in that document and relays it to the library's other connections.
    func receivePresence(document: DocumentID, device: DeviceID, state: [UInt8], from id: UInt64) {
        guard let connection = connections[id] else { return }
        guard let own = connection.device else {
            return refuse(connection, code: 1002, "a presence frame before a hello")
        }
        guard own.id == device else {
            return refuse(connection, code: 1008, "a presence frame names another device (\(device))")
        }
        guard state.count <= limits.presenceBytes else {
            return refuse(
                connection, code: 1009,
                "a presence state of \(state.count) bytes; at most \(limits.presenceBytes) are accepted")
        }
        // Presence in a document outside the connection's scope is no one's to see.
        guard connection.scope.includes(document) else { return metrics.presenceDropped.increment() }
        let shown = connection.presence.states[document] != nil
        // An empty state that takes a shown one away passes whatever the rate: it follows a state that passed, so it
        // at most doubles the rate, and a cursor must not stay on the others' screens after its device left.
        guard connection.presence.bucket.take() || (state.isEmpty && shown) else {
            return metrics.presenceDropped.increment()
        }
        guard state.isEmpty || shown || connection.presence.states.count < limits.presenceDocuments else {
            return metrics.presenceDropped.increment()
        }
        let before = connection.presence.states[document]?.count ?? 0
        connection.presence.states[document] = state.isEmpty ? nil : state
        connection.presence.bytes += state.count - before
        budget.charge(state.count)
        budget.release(before)
        let frame = SyncFrame.presence(document: document, device: device, state: state).encoded()
        relayPresence(frame, in: document, from: connection)
        publishPresence?(frame)
    }

    /// Relays a presence frame a device connected to another server process sent (through the storage they share)
    /// to this process's connections that read presence. Such states are not kept: a device that joins here sees
    /// them when they next change or are renewed (every 10 s).
    func relayRemotePresence(_ frame: [UInt8]) {
        // Checked as a device's presence is: a presence frame within the bound, never any other kind.
        guard case .presence(let document, let device, let state)? = try? SyncFrame(decoding: frame),
            state.count <= limits.presenceBytes
        else { return metrics.presenceDropped.increment() }
        for id in connections.keys.sorted() {
            guard let recipient = connections[id], recipient.presence.reads, let own = recipient.device,
                own.id != device, recipient.scope.includes(document)
            else { continue }
            offerPresence(frame, to: recipient)
        }
    }

    /// Queues a presence frame of `document` for every connection of the library but `sender` that said hello,
    /// reads presence and may sync the document.
    func relayPresence(_ frame: [UInt8], in document: DocumentID, from sender: Connection) {
        for recipient in connections.values where recipient.id != sender.id {
            guard recipient.presence.reads, recipient.device != nil, recipient.scope.includes(document) else {
                continue
            }
            offerPresence(frame, to: recipient)
        }
    }

    /// Sends `connection`, which has just said hello, ``SyncFrame/presenceWelcome``, then the states the library's
    /// other connections show, one frame each, oldest connection first (of a device connected twice, its newest connection's state arrives last).
    func showPresence(to connection: Connection) {
        guard connection.presence.reads else { return }
        // First, that this server relays presence: the client sends its own only from then on. Queued whatever the
        // queue holds (a large hello's answer may fill it): a client never welcomed would send no presence at all.
        let welcome = SyncFrame.presenceWelcome.encoded()
        connection.outbox.reply(welcome)
        metrics.bytesOut.increment(by: Int64(welcome.count))
        for id in connections.keys.sorted() where id != connection.id {
            guard let other = connections[id], let device = other.device else { continue }
            for document in other.presence.states.keys.sorted() where connection.scope.includes(document) {
                let state = other.presence.states[document]!
                offerPresence(
                    SyncFrame.presence(document: document, device: device.id, state: state).encoded(), to: connection)
            }
        }
    }

    /// Once `connection` is gone: its states no longer count in the memory budget, and its device leaves each document
    /// where it showed one (an empty state relayed), unless another open connection of the device still shows a state
    /// there (a device that reconnected before its old connection was found closed stays).
    func withdrawPresence(of connection: Connection) {
        let states = connection.presence.states
        budget.release(connection.presence.bytes)
        connection.presence.states = [:]
        connection.presence.bytes = 0
        guard let device = connection.device?.id, !states.isEmpty else { return }
        for document in states.keys.sorted() {
            let stillShown = connections.values.contains { other in
                other.device?.id == device && other.presence.states[document] != nil
            }
            guard !stillShown else { continue }
            let frame = SyncFrame.presence(document: document, device: device, state: []).encoded()
            relayPresence(frame, in: document, from: connection)
            publishPresence?(frame)
        }
    }

    /// Queues a presence frame for `recipient` unless its queue is busy (it is behind in reading): then the frame is
    /// dropped, as the next state replaces it anyway.
    private func offerPresence(_ frame: [UInt8], to recipient: Connection) {
        if recipient.outbox.offer(frame) {
            metrics.presenceRelayed.increment()
            metrics.bytesOut.increment(by: Int64(frame.count))
        } else {
            metrics.presenceDropped.increment()
        }
    }
}
