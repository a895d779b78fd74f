import FolioCore
import Synchronization

/// Where a library's open documents send this device's presence (the live sync of the moment, if any), and the other
/// devices' latest presence in each document, for a document opened after it came.
final class PresenceOutlet: Sendable {
    /// The most presences of other devices kept for documents opened later; past it, new ones only reach the
    /// documents open when they come. A server relays at most 16 documents' presence per connection.
    static let keptLimit = 4_096

    /// A state kept, and when it was last heard (milliseconds since 1970, by the library's clock).
    struct Kept: Sendable {
        var state: [UInt8]
        var heard: Int64
    }

    private let send = Mutex<(@Sendable (DocumentID, [UInt8]) -> Void)?>(nil)
    private let kept = Mutex<(states: [DocumentID: [DeviceID: Kept]], count: Int)>(([:], 0))

    /// Keeps `state` as `device`'s latest in `document` (empty: it left), heard at `heard`.
    func keep(_ state: [UInt8], from device: DeviceID, in document: DocumentID, heard: Int64) {
        kept.withLock { kept in
            if state.isEmpty {
                guard kept.states[document]?.removeValue(forKey: device) != nil else { return }
                kept.count -= 1
                if kept.states[document]?.isEmpty == true { kept.states[document] = nil }
            } else if kept.states[document]?[device] != nil {
                kept.states[document]?[device] = Kept(state: state, heard: heard)
            } else if kept.count < Self.keptLimit {
                kept.states[document, default: [:]][device] = Kept(state: state, heard: heard)
                kept.count += 1
            }
        }
    }

    /// The other devices' latest presence in `document`, by device: those heard within `PresenceTracking.timeout`
    /// of `now` (the older ones are dropped).
    func kept(in document: DocumentID, now: Int64) -> [(device: DeviceID, kept: Kept)] {
        kept.withLock { kept in
            let states = kept.states[document] ?? [:]
            let current = states.filter { now - $0.value.heard < PresenceTracking.timeout }
            if current.count < states.count {
                kept.count -= states.count - current.count
                kept.states[document] = current.isEmpty ? nil : current
            }
            return current.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
    }

    /// Forgets every other device's presence.
    func forgetKept() { kept.withLock { $0 = ([:], 0) } }

    /// Sends `state` (empty: nothing shown) for `document`; nothing while no live sync runs.
    func callAsFunction(_ state: [UInt8], in document: DocumentID) {
        let send = self.send.withLock { $0 }
        send?(document, state)
    }

    func attach(_ send: (@Sendable (DocumentID, [UInt8]) -> Void)?) {
        self.send.withLock { $0 = send }
    }
}

extension DocumentLibrary {
    /// Makes `send` the way open documents' presence leaves (a live sync's); `nil` stops it.
    package func attachPresence(_ send: (@Sendable (DocumentID, [UInt8]) -> Void)?) {
        presenceOutlet.attach(send)
    }

    /// Passes another device's presence in `document` (the bytes of a `PresenceState`; empty: it left) to the
    /// document if it is open, and keeps it for the document's next opening.
    package func receivePresence(_ state: [UInt8], from device: DeviceID, in document: DocumentID) async {
        let heard = clock.now().millisecondsSince1970
        presenceOutlet.keep(state, from: device, in: document, heard: heard)
        for open in await openDocuments.documents(among: [document]) {
            await open.receivePresence(state, from: device, heard: heard)
        }
    }

    /// Forgets every other device's presence in the open documents: the connection that brought it ended.
    package func forgetPresence() async {
        presenceOutlet.forgetKept()
        for open in openDocuments.all() { await open.forgetPresence() }
    }
}
