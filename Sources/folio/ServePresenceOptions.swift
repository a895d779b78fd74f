import ArgumentParser
import FolioCore
import FolioServer
import FolioSync

/// `folio serve`'s bounds on presence (devices' cursors, relayed and never stored): how large a state, how often and
/// in how many documents at once.
struct ServePresenceOptions: ParsableArguments {
    @Option(help: "Bytes of one presence state; a larger one closes the connection (1009).")
    var presenceBytes = ServerLimits().presenceBytes

    @Option(help: "Presence frames a connection may send a second (in bursts of as many); further ones are dropped.")
    var presencePerSecond = ServerLimits().presencePerSecond

    @Option(help: "Documents a connection may show a presence state in at once; a state for another is dropped.")
    var presenceDocuments = ServerLimits().presenceDocuments

    func validate() throws {
        // Below the largest state a Folio client writes, a client would be closed at every connection.
        guard (PresenceState.maximumEncodedBytes...SyncFrame.maximumPresenceBytes).contains(presenceBytes) else {
            throw ValidationError(
                "--presence-bytes must be within \(PresenceState.maximumEncodedBytes)...\(SyncFrame.maximumPresenceBytes)"
            )
        }
        guard (1...10_000).contains(presencePerSecond) else {
            throw ValidationError("--presence-per-second must be within 1...10000")
        }
        guard (1...1_024).contains(presenceDocuments) else {
            throw ValidationError("--presence-documents must be within 1...1024")
        }
    }

    /// `limits` with these bounds.
    func applied(to limits: ServerLimits) -> ServerLimits {
        var limits = limits
        limits.presenceBytes = presenceBytes
        limits.presencePerSecond = presencePerSecond
        limits.presenceDocuments = presenceDocuments
        return limits
    }
}
