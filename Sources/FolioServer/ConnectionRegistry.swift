import Foundation
import Logging
import Synchronization

/// The open WebSocket connections of valid tokens: counted against ``ServerLimits/connections`` and the limits per
/// token (an app token's user), library and remote address, and found by token when it is revoked or expires, or all
/// when the server stops.
final class ConnectionRegistry: Sendable {
    private struct Entry {
        var grant: AccessGrant
        var address: String
        /// When it was admitted, by the wall clock (for the admin API's list of sessions).
        var opened: Date
        var outbox: Outbox?
        /// A close asked for before the connection had its outbox: it is closed with it once attached.
        var pendingClose: Outbox.Close?
        var token: String { grant.key }
        var library: String { grant.library }
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var perToken: [String: Int] = [:]
        var perLibrary: [String: Int] = [:]
        var perAddress: [String: Int] = [:]
        var next: UInt64 = 0
        /// Set when the server stops: connections attached later are closed with it at once.
        var closing: (code: UInt16, reason: String)?
    }

    private let state = Mutex(State())

    /// Connections admitted and not released.
    var count: Int { state.withLock { $0.entries.count } }

    /// Admits a connection of `grant` from `address` within `limits`, or says which limit it is over.
    func admit(_ grant: AccessGrant, address: String, opened: Date = Date(), limits: ServerLimits) -> Result<
        UInt64, Refused
    > {
        let (token, library) = (grant.key, grant.library)
        return state.withLock { state in
            if state.entries.count >= limits.connections {
                return .failure(Refused(reason: "the server has as many connections as it takes"))
            }
            if state.perToken[token, default: 0] >= limits.connectionsPerToken {
                return .failure(Refused(reason: "this token has as many connections as it may open"))
            }
            if state.perLibrary[library, default: 0] >= limits.connectionsPerLibrary {
                return .failure(Refused(reason: "this library has as many connections as it may have"))
            }
            if state.perAddress[address, default: 0] >= limits.connectionsPerAddress {
                return .failure(Refused(reason: "this address has as many connections as it may open"))
            }
            let id = state.next
            state.next += 1
            state.entries[id] = Entry(grant: grant, address: address, opened: opened)
            state.perToken[token, default: 0] += 1
            state.perLibrary[library, default: 0] += 1
            state.perAddress[address, default: 0] += 1
            return .success(id)
        }
    }

    /// Why a connection was not admitted.
    struct Refused: Error {
        var reason: String
    }

    /// Gives the admitted connection `id` its outbox, through which it is closed on revocation or shutdown.
    func attach(_ id: UInt64, outbox: Outbox) {
        let closing = state.withLock { state -> (code: UInt16, reason: String)? in
            state.entries[id]?.outbox = outbox
            if let pending = state.entries[id]?.pendingClose { return (pending.code, pending.reason) }
            return state.closing
        }
        if let closing { outbox.close(code: closing.code, reason: closing.reason) }
    }

    /// Asks the connections `matching` to close, those not attached yet once they are; returns how many were not
    /// closing already.
    private func close(code: UInt16, reason: String, matching: (UInt64, Entry) -> Bool) -> Int {
        let (outboxes, pending) = state.withLock { state -> ([Outbox], Int) in
            var outboxes: [Outbox] = []
            var pending = 0
            for (id, entry) in state.entries where matching(id, entry) {
                if let outbox = entry.outbox {
                    outboxes.append(outbox)
                } else if entry.pendingClose == nil {
                    state.entries[id]?.pendingClose = Outbox.Close(code: code, reason: reason)
                    pending += 1
                }
            }
            return (outboxes, pending)
        }
        return pending + outboxes.count { $0.close(code: code, reason: reason) }
    }

    /// Counts the connection `id` out.
    func release(_ id: UInt64) {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: id) else { return }
            Self.decrement(&state.perToken, entry.token)
            Self.decrement(&state.perLibrary, entry.library)
            Self.decrement(&state.perAddress, entry.address)
        }
    }

    private static func decrement(_ counts: inout [String: Int], _ key: String) {
        let left = counts[key, default: 1] - 1
        counts[key] = left > 0 ? left : nil
    }

    /// The tokens with connections open.
    var tokens: Set<String> { state.withLock { Set($0.perToken.keys) } }

    /// Asks every connection of `token` to close; returns how many were not closing already.
    @discardableResult
    func close(token: String, code: UInt16, reason: String) -> Int {
        close(code: code, reason: reason) { $1.token == token }
    }

    /// Asks every connection whose grant ended at `now` or before to close (4402); returns how many were not closing
    /// already.
    @discardableResult
    func closeExpired(at now: ContinuousClock.Instant) -> Int {
        close(code: SyncServer.expiredCode, reason: "the token expired") { $1.grant.expires.map { $0 <= now } ?? false }
    }

    /// The sessions of `library`, oldest first.
    func sessions(of library: String) -> [AdminAPI.Session] {
        state.withLock { state in
            state.entries.filter { $0.value.library == library }.sorted { $0.key < $1.key }.map {
                AdminAPI.Session(
                    id: $0.key, grantee: $0.value.token, role: $0.value.grant.role, shared: $0.value.grant.viaShare,
                    address: $0.value.address, opened: $0.value.opened)
            }
        }
    }

    /// Asks the connection `id` of `library` to close; whether it was open and not closing already.
    func close(session id: UInt64, of library: String, code: UInt16, reason: String) -> Bool {
        close(code: code, reason: reason) { $0 == id && $1.library == library } > 0
    }

    /// Asks every connection of `library` to close (those of `grantee` alone, when given, only those a share
    /// opened when `sharedOnly`, and only those whose grant `granted` accepts); returns how many were not closing
    /// already.
    @discardableResult
    func close(
        library: String, grantee: String? = nil, sharedOnly: Bool = false, code: UInt16, reason: String,
        where granted: (AccessGrant) -> Bool = { _ in true }
    ) -> Int {
        close(code: code, reason: reason) {
            $1.library == library && (grantee == nil || $1.token == grantee) && (!sharedOnly || $1.grant.viaShare)
                && granted($1.grant)
        }
    }

    /// The grants of the connections a share opened: what the revocation watch checks against the shares.
    var sharedGrants: [(id: UInt64, grant: AccessGrant)] {
        state.withLock { state in
            state.entries.filter { $0.value.grant.viaShare }.sorted { $0.key < $1.key }.map { ($0.key, $0.value.grant) }
        }
    }

    /// The libraries with connections open.
    var libraries: Set<String> { state.withLock { Set($0.perLibrary.keys) } }

    /// Asks every connection, and every one attached from now on, to close.
    func closeAll(code: UInt16, reason: String) {
        let outboxes = state.withLock { state in
            state.closing = (code, reason)
            return state.entries.values.compactMap(\.outbox)
        }
        for outbox in outboxes { outbox.close(code: code, reason: reason) }
    }
}

/// Log lines about refused and failed connections, at most ``perSecond`` a second: past it lines are counted, and the
/// next line written says how many were left out (`suppressed`), so that a flood of refusals cannot flood the log.
final class RefusalLog: Sendable {
    /// The most lines written in one second.
    let perSecond: Int
    private let state = Mutex<(window: ContinuousClock.Instant, lines: Int, suppressed: Int)>((.now, 0, 0))

    init(perSecond: Int = 10) {
        self.perSecond = perSecond
    }

    /// Writes `message` as a warning with `metadata`, unless this second's lines are used up.
    func warning(_ message: String, metadata: Logger.Metadata, to logger: Logger) {
        let suppressed = state.withLock { state -> Int? in
            let now = ContinuousClock.now
            if now - state.window >= .seconds(1) {
                state.window = now
                state.lines = 0
            }
            guard state.lines < perSecond else {
                state.suppressed += 1
                return nil
            }
            state.lines += 1
            defer { state.suppressed = 0 }
            return state.suppressed
        }
        guard let suppressed else { return }
        var metadata = metadata
        if suppressed > 0 { metadata["suppressed"] = .stringConvertible(suppressed) }
        logger.warning("\(message)", metadata: metadata)
    }
}
