import FolioCore
import Synchronization

/// Where a library's open documents send this device's presence: the live sync of the moment, if any.
final class PresenceOutlet: Sendable {
    private let send = Mutex<(@Sendable (DocumentID, [UInt8]) -> Void)?>(nil)

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
    /// document if it is open; an app that opens it later sees the device from its next presence on.
    package func receivePresence(_ state: [UInt8], from device: DeviceID, in document: DocumentID) async {
        for open in await openDocuments.documents(among: [document]) {
            await open.receivePresence(state, from: device)
        }
    }

    /// Forgets every other device's presence in the open documents: the connection that brought it ended.
    package func forgetPresence() async {
        for open in openDocuments.all() { await open.forgetPresence() }
    }
}
