import Foundation
import HTTPTypes
import Logging

/// Who may connect, and for how long: the bearer token checked at the upgrade (the server's own, or one the app's
/// backend signed), and the connections of tokens and users revoked or expired since, closed.
extension SyncServer {
    /// What the connections of an app's user are counted and closed by: this, then the user's subject.
    static let userKeyPrefix = "user:"

    /// Why a sync request is refused, and its HTTP status.
    struct Refusal: Error {
        var status: HTTPResponse.Status
        var reason: String
        /// The token's id, when the token is valid (for another library).
        var token: String?
    }

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
            switch await keys.grant(secret, library: library, now: Date()) {
            case .success(let grant):
                let accounts = self.accounts
                let logger = self.logger
                let subject = String(grant.key.dropFirst(Self.userKeyPrefix.count))
                return await Self.offTheLoop {
                    do {
                        guard try accounts.revokedUsers(among: [subject]).isEmpty else {
                            return .failure(
                                Refusal(status: .unauthorized, reason: "the user was revoked", token: grant.key))
                        }
                        return .success(grant)
                    } catch {
                        logger.error("the account database failed", metadata: ["error": .string("\(error)")])
                        return .failure(Refusal(status: .internalServerError, reason: "the server cannot check tokens"))
                    }
                }
            case .failure(.invalid(let reason)): return .failure(Refusal(status: .unauthorized, reason: reason))
            case .failure(.otherLibrary(let user)):
                return .failure(
                    Refusal(
                        status: .forbidden, reason: "the token does not grant this library",
                        token: Self.userKeyPrefix + user))
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

    /// Closes the connections of revoked and expired tokens: every second, those whose app token expired, and those
    /// of the server's own tokens and of the app's users the account database says are revoked: another process (`folio serve token revoke`, another server) revokes them in the account
    /// database, and no clock is compared (a revocation stamped by a clock behind this one's still closes them).
    func watchRevocations() async {
        var closed: Set<String> = []
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            // App tokens are not revoked but expire: their connections close when they do.
            let expired = registry.closeExpired(at: .now)
            if expired > 0 {
                logger.info("closing the connections of expired tokens", metadata: ["connections": "\(expired)"])
            }
            // The server's own tokens by id, and the app's users by subject (their keys `user:SUBJECT`).
            let keys = registry.tokens
            let open = keys.filter { $0.hasPrefix("tok_") }
            let users = keys.filter { $0.hasPrefix(Self.userKeyPrefix) }.map {
                String($0.dropFirst(Self.userKeyPrefix.count))
            }
            guard !keys.isEmpty else { continue }
            let revoked: [String]
            do {
                let accounts = self.accounts
                let presented = open.sorted()
                let subjects = users.sorted()
                revoked = try await Self.offTheLoop {
                    Result {
                        try accounts.revokedTokens(among: presented)
                            + accounts.revokedUsers(among: subjects).map { Self.userKeyPrefix + $0 }
                    }
                }.get()
            } catch {
                logger.error("cannot look for revoked tokens", metadata: ["error": .string("\(error)")])
                continue
            }
            for token in revoked where keys.contains(token) {
                let reason = token.hasPrefix(Self.userKeyPrefix) ? "the user was revoked" : "the token was revoked"
                let count = registry.close(token: token, code: 4401, reason: reason)
                if count > 0, closed.insert(token).inserted {
                    logger.warning(
                        "closing the connections of a revoked token",
                        metadata: ["token": .string(token), "connections": .stringConvertible(count)])
                }
            }
            closed.formIntersection(revoked)
        }
    }
}
