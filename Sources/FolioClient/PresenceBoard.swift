import FolioCore
import Synchronization

/// This device's presence in each document (the bytes of a `PresenceState`), as a live sync sends it: the latest
/// state per document, sent by the connection of the moment at most once per ``interval``, and all of it again to
/// every new connection (a server keeps presence only while the connection that sent it lasts).
final class PresenceBoard: Sendable {
    /// The shortest time between two sends of the states that changed: 20 a second, within a server's default rate.
    static let interval: Duration = .milliseconds(50)
    /// The most documents this device shows itself in at once (a server's default bound): later ones wait until one
    /// of them is cleared.
    static let documents = 16
    /// How often every state is sent again, changed or not, while the connection lasts: a receiver drops a state
    /// not heard again for 30 s (its device's leaving may never reach it: a server process killed, a frame dropped
    /// for a reader behind), so a device that stays keeps showing.
    static let renewal: Duration = .seconds(10)

    private struct State {
        var states: [DocumentID: [UInt8]] = [:]
        var changed: Set<DocumentID> = []
        /// The loop of the connection of the moment, woken when a state changes.
        var wake: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    /// Sets this device's state in `document`; empty: it shows nothing there any more.
    func set(_ bytes: [UInt8], in document: DocumentID) {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            if bytes.isEmpty {
                guard state.states.removeValue(forKey: document) != nil else { return nil }
            } else {
                guard state.states[document] != bytes else { return nil }
                guard state.states[document] != nil || state.states.count < Self.documents else { return nil }
                state.states[document] = bytes
            }
            state.changed.insert(document)
            return state.wake
        }
        wake?()
    }

    /// Attaches a new connection's loop: every state counts as changed, so that it goes to the new connection.
    func attach(_ wake: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.wake = wake
            state.changed = Set(state.states.keys)
        }
    }

    /// Counts every state as changed, so that the next send renews them all (see ``renewal``).
    func renew() {
        state.withLock { state in state.changed.formUnion(state.states.keys) }
    }

    /// Detaches the connection's loop.
    func detach() { state.withLock { $0.wake = nil } }

    /// Takes the states that changed since the last call, in document order (an empty one for a cleared document).
    func takeChanged() -> [(DocumentID, [UInt8])] {
        state.withLock { state in
            defer { state.changed = [] }
            return state.changed.sorted().map { ($0, state.states[$0] ?? []) }
        }
    }

    /// Whether a state changed since the last ``takeChanged()``.
    var hasChanges: Bool { state.withLock { !$0.changed.isEmpty } }
}
