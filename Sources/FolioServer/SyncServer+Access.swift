import FolioSync
import Foundation
import HTTPTypes
import Logging

/// Who may connect, and for how long: the bearer token checked at the upgrade (the server's own, or one the app's
/// backend signed), and the connections of tokens and users revoked or expired since, closed.
extension SyncServer {
    /// What the connections of an app's user are counted and closed by: this, then the user's subject.
    static let userKeyPrefix = "user:"

    /// The app's user a grantee key names (`user:SUBJECT`), or `nil` for a server token's id.
    static func subject(of key: String) -> String? {
        key.hasPrefix(userKeyPrefix) ? String(key.dropFirst(userKeyPrefix.count)) : nil
    }

    /// Why a sync request is refused, and its HTTP status.
    struct Refusal: Error {
        var status: HTTPResponse.Status
        var reason: String
        /// The token's id, when the token is valid (for another library).
        var token: String?
        /// The close code of a refused WebSocket upgrade, when not the one of `status` (4401 for 401, 4403 for 403,
        /// 4503 for 503).
        var closeCode: Int? = nil
    }

    /// The close code of an app token's connection when the token expires, and of an upgrade with an expired token.
    static let expiredCode: UInt16 = 4402
    /// The close code of a connection a share opened whose role changed: the client connects again, with the new
    /// role.
    static let roleChangedCode: UInt16 = 4409

    /// Checks the bearer token of a sync request against `library` (``authorize(_:library:)``), and that the library
    /// is online (as ``offline`` says): an offline library's refusal is 503 (4503 on a WebSocket).
    func authorizeSync(_ headers: HTTPFields, library: String) async -> Result<AccessGrant, Refusal> {
        let authorized = await authorize(headers, library: library)
        guard case .success(let grant) = authorized else { return authorized }
        guard offline.withLock({ $0.contains(library) }) else { return .success(grant) }
        return .failure(Refusal(status: .serviceUnavailable, reason: Self.offlineReason, token: grant.key))
    }

    /// Why the connections of an offline library are refused and closed (4503).
    static let offlineReason = "the library is offline"

    /// Checks the bearer token against `library`: one of the server's own tokens, or a token the app's backend
    /// signed (``Configuration/appTokens``).
    func authorize(_ headers: HTTPFields, library: String) async -> Result<AccessGrant, Refusal> {
        // RFC 7235: the scheme is case-insensitive.
        guard let value = headers[.authorization], value.utf8.count > 7, value.prefix(7).lowercased() == "bearer "
        else {
            return .failure(Refusal(status: .unauthorized, reason: "a bearer token is required"))
        }
        let secret = String(value.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        if AppTokenKeys.isAppToken(secret) {
            guard let keys = configuration.appTokens else {
                return .failure(Refusal(status: .unauthorized, reason: "the server takes no app tokens"))
            }
            let named: AccessGrant
            let viaShare: Bool
            switch await keys.grant(secret, library: library, now: Date()) {
            case .success(let grant): (named, viaShare) = (grant, false)
            case .failure(.invalid(let reason)): return .failure(Refusal(status: .unauthorized, reason: reason))
            case .failure(.expired):
                return .failure(
                    Refusal(status: .unauthorized, reason: "the token expired", closeCode: Int(Self.expiredCode)))
            case .failure(.otherLibrary(let user, let person, let expires, let claimed)):
                // The token does not name the whole library: the documents it names and the user's shares may
                // grant it, or some of it.
                named = AccessGrant(
                    key: Self.userKeyPrefix + user, library: library, role: .read, claimed: claimed, expires: expires,
                    person: person)
                viaShare = true
            }
            let accounts = self.accounts
            let logger = self.logger
            let subject = Self.subject(of: named.key) ?? ""
            return await Self.offTheLoop {
                do {
                    guard try accounts.revokedUsers(among: [subject]).isEmpty else {
                        return .failure(
                            Refusal(status: .unauthorized, reason: "the user was revoked", token: named.key))
                    }
                    guard viaShare else { return .success(named) }
                    let shares = try accounts.shares(among: [subject], in: [library])
                    guard let granted = AccessGrant.throughShares(claimed: named.claimed, shares: shares) else {
                        return .failure(
                            Refusal(
                                status: .forbidden, reason: "the token does not grant this library", token: named.key))
                    }
                    // A scope names at most so many documents (the claim adds at most 256 to the shares' bound).
                    guard (granted.documents?.count ?? 0) <= SyncScope.maximumDocuments else {
                        return .failure(
                            Refusal(
                                status: .forbidden,
                                reason: "more than \(SyncScope.maximumDocuments) documents are shared with the user",
                                token: named.key))
                    }
                    var grant = named
                    (grant.role, grant.documents) = granted
                    grant.viaShare = true
                    return .success(grant)
                } catch {
                    logger.error("the account database failed", metadata: ["error": .string("\(error)")])
                    return .failure(Refusal(status: .internalServerError, reason: "the server cannot check tokens"))
                }
            }
        }
        let accounts = self.accounts
        let logger = self.logger
        let checked: Result<ServerToken?, Refusal> = await Self.offTheLoop {
            do { return .success(try accounts.authenticate(secret)) } catch {
                logger.error("the account database failed", metadata: ["error": .string("\(error)")])
                return .failure(Refusal(status: .internalServerError, reason: "the server cannot check tokens"))
            }
        }
        let token: ServerToken?
        switch checked {
        case .success(let found): token = found
        case .failure(let refusal): return .failure(refusal)
        }
        guard let token else { return .failure(Refusal(status: .unauthorized, reason: "the token is not valid")) }
        guard token.library == library else {
            return .failure(
                Refusal(status: .forbidden, reason: "the token does not grant this library", token: token.id))
        }
        return .success(AccessGrant(key: token.id, library: token.library, role: token.role, expires: nil))
    }

    /// Closes the connections of revoked and expired tokens, ended shares and offline libraries: every second, those
    /// whose app token expired, those of the server's own tokens and of the app's users the account database says are
    /// revoked, those a share opened that no longer grants them (4401; 4409 for a new role), and those of libraries
    /// taken offline (4503).
    /// Another process (`folio serve token revoke`, another server, the admin API of another server) may have changed
    /// the account database, and no clock is compared (a revocation stamped by a clock behind this one's still closes
    /// them).
    func watchRevocations() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            // App tokens are not revoked but expire: their connections close when they do.
            let expired = registry.closeExpired(at: .now)
            if expired > 0 {
                logger.info("closing the connections of expired tokens", metadata: ["connections": "\(expired)"])
            }
            // The allowances of grantees gone and paid up are forgotten.
            quota.prune(keeping: registry.tokens)
            do {
                // Whatever process took a library offline or brought it back.
                try await closeOffline()
                guard registry.count > 0 else { continue }
                try await closeRevoked()
                try await closeUnshared()
            } catch {
                logger.error("cannot look for revoked tokens", metadata: ["error": .string("\(error)")])
            }
        }
    }

    /// Closes the connections of the server's own tokens (by id) and of the app's users (their keys `user:SUBJECT`)
    /// that are revoked, logging those it closes (a connection already closing is not counted again).
    private func closeRevoked() async throws {
        let keys = registry.tokens
        let open = keys.filter { $0.hasPrefix("tok_") }.sorted()
        let users = keys.compactMap(Self.subject(of:)).sorted()
        let accounts = self.accounts
        let revoked = try await Self.offTheLoop {
            Result {
                try accounts.revokedTokens(among: open)
                    + accounts.revokedUsers(among: users).map { Self.userKeyPrefix + $0 }
            }
        }.get()
        for token in revoked where keys.contains(token) {
            let reason = token.hasPrefix(Self.userKeyPrefix) ? "the user was revoked" : "the token was revoked"
            let count = registry.close(token: token, code: 4401, reason: reason)
            if count > 0 {
                logger.warning(
                    "closing the connections of a revoked token",
                    metadata: ["token": .string(token), "connections": .stringConvertible(count)])
            }
        }
    }

    /// Closes the connections a share (or an app token's `documents` claim) opened that the user's shares no longer
    /// grant anything (4401), or grant otherwise now: another role, other documents (4409: the client comes back
    /// with what it is granted now).
    private func closeUnshared() async throws {
        let shared = registry.sharedGrants
        guard !shared.isEmpty else { return }
        let subjects = Set(shared.compactMap { Self.subject(of: $0.grant.key) }).sorted()
        let libraries = Set(shared.map(\.grant.library)).sorted()
        let accounts = self.accounts
        let shares = try await Self.offTheLoop {
            Result { try accounts.shares(among: subjects, in: libraries) }
        }.get()
        var byGrantee: [String: [LibraryShare]] = [:]
        for share in shares {
            byGrantee[Self.userKeyPrefix + share.subject + "/" + share.library, default: []].append(share)
        }
        for (id, grant) in shared {
            let now = AccessGrant.throughShares(
                claimed: grant.claimed, shares: byGrantee[grant.key + "/" + grant.library] ?? [])
            guard now?.role != grant.role || now?.documents != grant.documents else { continue }
            let (code, reason) =
                now == nil
                ? (UInt16(4401), "the library is no longer shared with the user")
                : now?.documents == grant.documents
                    ? (Self.roleChangedCode, "the user's role changed: connect again")
                    : (Self.roleChangedCode, "what is shared with the user changed: connect again")
            if registry.close(session: id, of: grant.library, code: code, reason: reason) {
                logger.warning(
                    "closing a connection of an ended share",
                    metadata: ["token": .string(grant.key), "library": .string(grant.library)])
            }
        }
    }

    /// Reads which libraries are offline into ``offline``, and closes their connections (4503).
    private func closeOffline() async throws {
        let accounts = self.accounts
        let offline = try await Self.offTheLoop { Result { try accounts.offlineLibraries() } }.get()
        self.offline.withLock { $0 = Set(offline.map(\.library)) }
        let open = registry.libraries
        for library in offline where open.contains(library.library) {
            let count = registry.close(library: library.library, code: 4503, reason: Self.offlineReason)
            if count > 0 {
                logger.warning(
                    "closing the connections of an offline library",
                    metadata: ["library": .string(library.library), "connections": .stringConvertible(count)])
            }
        }
    }
}
