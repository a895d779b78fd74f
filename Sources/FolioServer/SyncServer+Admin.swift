import FolioCore
import FolioSync
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The admin API: a library's sessions, shares, users, tokens and whether it is online, managed over HTTP with JSON
/// by a token with the ``LibraryRole/admin`` role of that library (docs/protocol.md, "Admin API").
extension SyncServer {
    /// A refused or failed admin request: its status and why.
    struct AdminFailure: Error {
        var status: HTTPResponse.Status
        var reason: String

        /// The failure of an account call: a name not valid (400), nothing found (404), a clash (409), or the storage
        /// (500).
        init(_ error: any Error) {
            let code = (error as? ServerError)?.code
            switch code {
            case .invalidName?: status = .badRequest
            case .notFound?: status = .notFound
            case .conflict?: status = .conflict
            default: status = .internalServerError
            }
            // The storage's own words stay in the server's log.
            reason =
                status == .internalServerError ? "the server's storage failed" : (error as? ServerError)?.message ?? ""
        }

        init(_ status: HTTPResponse.Status, _ reason: String) {
            self.status = status
            self.reason = reason
        }
    }

    /// The close code of a session an admin ended.
    static let kickedCode: UInt16 = 4410

    /// A path parameter of the request, percent-decoded (Hummingbird gives them as they were sent).
    private static func parameter(_ name: String, of context: PeerRequestContext) -> String {
        let raw = context.parameters.get(name) ?? ""
        return raw.removingPercentEncoding ?? raw
    }

    /// Adds the admin API's routes to `router`.
    func addAdminRoutes(to router: Router<PeerRequestContext>) {
        let base = "v1/libraries/:library/admin"
        router.get(RouterPath(base)) { request, context in
            await self.administer(request, context) { library, _ in try await self.status(of: library) }
        }
        for (path, offline) in [("offline", true), ("online", false)] {
            router.post(RouterPath(base + "/" + path)) { request, context in
                await self.administer(request, context) { library, grant in
                    let accounts = self.accounts
                    try await self.blocking {
                        if offline {
                            try accounts.takeOffline(library, now: Date())
                        } else {
                            do { try accounts.bringOnline(library) } catch let error as ServerError
                                where error.code == .notFound
                            {}
                        }
                    }
                    self.offline.withLock { set in
                        if offline { set.insert(library) } else { set.remove(library) }
                    }
                    if offline { self.registry.close(library: library, code: 4503, reason: Self.offlineReason) }
                    self.audit(offline ? "took the library offline" : "brought the library online", grant)
                    return try await self.status(of: library)
                }
            }
        }
        router.get(RouterPath(base + "/sessions")) { request, context in
            await self.administer(request, context) { library, _ in
                self.registry.sessions(of: library)
            }
        }
        router.delete(RouterPath(base + "/sessions/:id")) { request, context in
            let id = UInt64(Self.parameter("id", of: context))
            return await self.administer(request, context) { library, grant -> AdminAPI.Status? in
                guard let id,
                    self.registry.close(
                        session: id, of: library, code: Self.kickedCode, reason: "an admin closed the session")
                else { throw AdminFailure(.notFound, "no session of the library has that number") }
                self.audit("closed a session", grant, ["session": .stringConvertible(id)])
                return nil
            }
        }
        addShareRoutes(to: router, base: base)
        addTokenRoutes(to: router, base: base)
    }

    private func addShareRoutes(to router: Router<PeerRequestContext>, base: String) {
        router.get(RouterPath(base + "/shares")) { request, context in
            await self.administer(request, context) { library, _ in
                let accounts = self.accounts
                return try await self.blocking { try accounts.shares(of: library) }.map(Self.described)
            }
        }
        router.put(RouterPath(base + "/shares")) { request, context in
            await self.administer(request, context) { library, grant in
                let wanted = try await Self.body(of: request, as: AdminAPI.ShareRequest.self)
                let document = try Self.document(wanted.document)
                let accounts = self.accounts
                let most = self.configuration.limits.sharesPerLibrary
                let (before, share) = try await self.blocking { () throws -> (LibraryShare?, LibraryShare?) in
                    let shares = try accounts.shares(of: library)
                    let before = shares.first { $0.subject == wanted.subject && $0.document == document }
                    guard before != nil || shares.count < most else {
                        throw AdminFailure(
                            .conflict, "the library has \(most) shares already")
                    }
                    // What a connection's scope can name.
                    let documents = shares.count { $0.subject == wanted.subject && $0.document != nil }
                    guard before != nil || document == nil || documents < SyncScope.maximumDocuments else {
                        throw AdminFailure(
                            .conflict,
                            "\(SyncScope.maximumDocuments) documents of the library are shared with the user already")
                    }
                    try accounts.share(
                        library, document: document, with: wanted.subject, role: wanted.role, now: Date())
                    let after = try accounts.shares(among: [wanted.subject], in: [library])
                    return (before, after.first { $0.document == document })
                }
                guard let share else { throw AdminFailure(.internalServerError, "the share was not kept") }
                // Connections of the old grant come back with the new one (the revocation watch would close them
                // within a second; a new role takes effect at once).
                if let before, before.role != wanted.role {
                    self.registry.close(
                        library: library, grantee: Self.userKeyPrefix + wanted.subject, sharedOnly: true,
                        code: Self.roleChangedCode, reason: "the user's role changed: connect again")
                }
                var audited: Logger.Metadata = [
                    "subject": .string(wanted.subject), "role": .string(wanted.role.rawValue),
                ]
                if let document { audited["document"] = .string(document.description) }
                self.audit(document == nil ? "shared the library" : "shared a document", grant, audited)
                return Self.described(share)
            }
        }
        router.delete(RouterPath(base + "/shares/:subject")) { request, context in
            let subject = Self.parameter("subject", of: context)
            let named = request.uri.queryParameters.get("document")
            return await self.administer(request, context) { library, grant -> AdminAPI.Status? in
                let document = try Self.document(named)
                let accounts = self.accounts
                let left = try await self.blocking { () throws -> [LibraryShare] in
                    try accounts.unshare(library, document: document, from: subject)
                    return try accounts.shares(among: [subject], in: [library])
                }
                if let document {
                    // The connections that synced the document come back with what is left, or are refused.
                    self.registry.close(
                        library: library, grantee: Self.userKeyPrefix + subject, sharedOnly: true,
                        code: Self.roleChangedCode, reason: "what is shared with the user changed: connect again"
                    ) { $0.documents?[document] != nil }
                    self.audit(
                        "ended a share of a document", grant,
                        ["subject": .string(subject), "document": .string(document.description)])
                } else {
                    // A user who still has documents of the library (shared, or named by their token) comes back
                    // with those; one who has nothing is refused.
                    let keeps = { (grant: AccessGrant) in
                        AccessGrant.throughShares(claimed: grant.claimed, shares: left) != nil
                    }
                    self.registry.close(
                        library: library, grantee: Self.userKeyPrefix + subject, sharedOnly: true, code: 4401,
                        reason: "the library is no longer shared with the user"
                    ) { $0.documents == nil && !keeps($0) }
                    self.registry.close(
                        library: library, grantee: Self.userKeyPrefix + subject, sharedOnly: true,
                        code: Self.roleChangedCode, reason: "what is shared with the user changed: connect again"
                    ) { $0.documents == nil && keeps($0) }
                    self.audit("ended a share", grant, ["subject": .string(subject)])
                }
                return nil
            }
        }
        router.get(RouterPath(base + "/users")) { request, context in
            await self.administer(request, context) { library, _ in try await self.users(of: library) }
        }
    }

    private func addTokenRoutes(to router: Router<PeerRequestContext>, base: String) {
        router.get(RouterPath(base + "/tokens")) { request, context in
            await self.administer(request, context) { library, _ in
                let accounts = self.accounts
                return try await self.blocking { try accounts.tokens(of: library) }.map(Self.described)
            }
        }
        router.post(RouterPath(base + "/tokens")) { request, context in
            await self.administer(request, context) { library, grant in
                // A token lasts until it is revoked: only an admin whose own grant lasts as long (a server token)
                // issues one, so that an admin by a share or an expiring app token cannot outlast either.
                guard grant.key.hasPrefix("tok_") else {
                    throw AdminFailure(.forbidden, "only an admin with a server token of the library issues tokens")
                }
                let wanted = try await Self.body(of: request, as: AdminAPI.TokenRequest.self)
                let accounts = self.accounts
                let most = self.configuration.limits.tokensPerLibrary
                let issued = try await self.blocking { () throws -> IssuedToken in
                    let tokens = try accounts.tokens(of: library)
                    // Revoked tokens count too: they stay listed, so issuing and revoking in turn would grow the list.
                    guard tokens.count < most else {
                        throw AdminFailure(.conflict, "the library has \(most) tokens already, revoked ones included")
                    }
                    // In the account the library belongs to, which its tokens name.
                    let account = tokens.first?.account ?? "default"
                    return try accounts.createToken(library: library, account: account, role: wanted.role)
                }
                self.audit(
                    "issued a token", grant,
                    ["issued": .string(issued.token.id), "role": .string(wanted.role.rawValue)])
                return AdminAPI.IssuedToken(token: Self.described(issued.token), secret: issued.secret)
            }
        }
        router.delete(RouterPath(base + "/tokens/:id")) { request, context in
            let id = Self.parameter("id", of: context)
            return await self.administer(request, context) { library, grant -> AdminAPI.Status? in
                let accounts = self.accounts
                try await self.blocking {
                    // Another library's token is not this admin's to revoke, nor to learn of.
                    guard try accounts.tokens(of: library).contains(where: { $0.id == id }) else {
                        throw ServerError(.notFound, "the library has no token \(id)")
                    }
                    try accounts.revoke(id, now: Date())
                }
                self.registry.close(token: id, code: 4401, reason: "the token was revoked")
                self.audit("revoked a token", grant, ["revoked": .string(id)])
                return nil
            }
        }
    }

    /// Answers an admin request of the library its path names: refused unless its bearer token grants that library
    /// the admin role; otherwise `handle`'s value as JSON (200; 201 for a `POST` that creates; 204 for `nil`), or its
    /// failure.
    private func administer<Body: Encodable & Sendable>(
        _ request: Request, _ context: PeerRequestContext,
        _ handle: @Sendable (String, AccessGrant) async throws -> Body?
    ) async -> Response {
        let library = context.parameters.get("library") ?? ""
        guard AccountNames.isValid(library) else {
            return Self.failure(AdminFailure(.notFound, "there is no such library"))
        }
        let grant: AccessGrant
        switch await authorize(request.headers, library: library) {
        case .failure(let refusal): return Self.failure(AdminFailure(refusal.status, refusal.reason))
        case .success(let granted) where granted.role < .admin || granted.documents != nil:
            return Self.failure(AdminFailure(.forbidden, "the token may not administer the library"))
        case .success(let granted): grant = granted
        }
        do {
            guard let body = try await handle(library, grant) else { return Response(status: .noContent) }
            let created = request.method == .post && request.uri.path.hasSuffix("/tokens")
            return Self.json(created ? .created : .ok, body)
        } catch let failure as AdminFailure {
            return Self.failure(failure)
        } catch {
            let failure = AdminFailure(error)
            if failure.status == .internalServerError {
                logger.error("the admin API failed", metadata: ["error": .string("\(error)")])
            }
            return Self.failure(failure)
        }
    }

    /// The request's body, decoded; refused when it is larger than ``AdminAPI/maximumBodyBytes`` (413) or does not
    /// decode (400).
    private static func body<T: Decodable>(of request: Request, as type: T.Type) async throws -> T {
        let buffer: ByteBuffer
        do { buffer = try await request.body.collect(upTo: AdminAPI.maximumBodyBytes) } catch {
            throw AdminFailure(.contentTooLarge, "a request body has at most \(AdminAPI.maximumBodyBytes) bytes")
        }
        do { return try AdminAPI.decoder.decode(T.self, from: Data(buffer.readableBytesView)) } catch {
            throw AdminFailure(.badRequest, "the body is not a \(T.self): \(String("\(error)".prefix(200)))")
        }
    }

    /// Runs an account call off the event loop.
    private func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await Self.offTheLoop { Result { try body() } }.get()
    }

    private func status(of library: String) async throws -> AdminAPI.Status {
        let accounts = self.accounts
        let (since, shares) = try await blocking {
            (try accounts.offlineSince(library), try accounts.shares(of: library).count)
        }
        return AdminAPI.Status(
            library: library, online: since == nil, offlineSince: since,
            sessions: registry.sessions(of: library).count, shares: shares)
    }

    /// The app's users the library is shared with or connected to, by subject.
    private func users(of library: String) async throws -> [AdminAPI.User] {
        let connected = Dictionary(
            grouping: registry.sessions(of: library).compactMap { Self.subject(of: $0.grantee) }, by: { $0 }
        ).mapValues(\.count)
        let accounts = self.accounts
        // Whether a user is revoked is told only of users connected here: a library's admin does not learn it of
        // anyone by sharing the library with them.
        let (shares, revoked) = try await blocking { () throws -> ([LibraryShare], Set<String>) in
            (try accounts.shares(of: library), Set(try accounts.revokedUsers(among: connected.keys.sorted())))
        }
        let roles = Dictionary(
            shares.filter { $0.document == nil }.map { ($0.subject, $0.role) }, uniquingKeysWith: { first, _ in first })
        let documents = Dictionary(grouping: shares.filter { $0.document != nil }, by: \.subject).mapValues(\.count)
        return Set(roles.keys).union(documents.keys).union(connected.keys).sorted().map {
            AdminAPI.User(
                subject: $0, sharedRole: roles[$0], sharedDocuments: documents[$0] ?? 0, sessions: connected[$0] ?? 0,
                revoked: revoked.contains($0))
        }
    }

    /// One log line per change an admin made, naming who made it.
    private func audit(_ action: String, _ grant: AccessGrant, _ extra: Logger.Metadata = [:]) {
        logger.notice(
            "admin: \(action)",
            metadata: extra.merging(["library": .string(grant.library), "by": .string(grant.key)]) { $1 })
    }

    private static func described(_ share: LibraryShare) -> AdminAPI.Share {
        AdminAPI.Share(
            subject: share.subject, document: share.document?.description, role: share.role, created: share.created)
    }

    /// The document a request names (its identity's text), or `nil` when it names none; refused (400) when the text
    /// is no identity.
    private static func document(_ text: String?) throws -> DocumentID? {
        guard let text else { return nil }
        guard let document = DocumentID(text) else {
            throw AdminFailure(.badRequest, "\(text.prefix(80).debugDescription) is not a document's identity")
        }
        return document
    }

    private static func described(_ token: ServerToken) -> AdminAPI.Token {
        AdminAPI.Token(id: token.id, role: token.role, created: token.created, revoked: token.revoked)
    }

    private static func json(_ status: HTTPResponse.Status, _ body: some Encodable) -> Response {
        let data = (try? AdminAPI.encoder.encode(body)) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    private static func failure(_ failure: AdminFailure) -> Response {
        json(failure.status, AdminAPI.Failure(error: failure.reason))
    }
}
