import FolioCore
import Foundation
import JWTKit

/// The keys of tokens an app's own backend signs for its users (JSON Web Tokens), which `folio serve` accepts beside
/// its own tokens (`folio serve --app-jwks FILE`, `--app-hs256-secret FILE`; docs/server.md, "Tokens from the app").
///
/// A token is signed with EdDSA (Ed25519: a key of the JWKS file, chosen by the token's `kid`) or with HS256 (the
/// shared secret), as its header's `alg` says; any other `alg`, `none` included, is refused, and a token is only
/// checked against keys of the algorithm it names. Its claims:
///
/// ```json
/// {"sub": "user-42", "name": "Anna", "exp": 1767225600, "libraries": ["notes"], "role": "write"}
/// ```
///
/// `sub`, the user (1 to 256 bytes); `name`, how people know the user (optional; recorded as the person of the user's
/// devices, `Device.person`, when it has 1 to 256 bytes and no control or format character, else the subject is);
/// `exp`, when it expires (seconds since 1970; required); `libraries`, the libraries
/// it grants (up to 256 valid names; none or absent: only the libraries shared with the user,
/// ``ServerAccounts/share(_:document:with:role:now:)``); `role`, one of ``LibraryRole``, what it grants in the libraries
/// it names (`write` when absent); `documents` (optional), single documents it grants in libraries it does not name
/// whole, by library, each document's identity with its role (up to 256 in all):
///
/// ```json
/// {"sub": "user-42", "exp": 1767225600, "documents": {"notes": {"6ba7b810-9dad-11d1-80b4-00c04fd430c8": "read"}}}
/// ```
///
/// A token may also carry `nbf` (not before, seconds since 1970: refused until then, give or take
/// ``clockSkew``), `iss` and `aud`. When the server is given an issuer and an audience
/// (``load(jwks:hs256Secret:issuer:audience:)``), a token must name that issuer in `iss` and that audience in `aud`
/// (one string, or an array holding it), so that keys that also sign the backend's other tokens (an identity
/// provider's) open nothing with tokens meant for something else.
///
/// A connection such a token opens syncs those documents alone (with those shared with the user), and never
/// administers the library. A token that fails any check is refused at the upgrade (4401; 4402 once expired; 4403 for a
/// library neither it nor a share grants), and a connection it opened is closed when it expires (4402).
public struct AppTokenKeys: Sendable {
    /// The EdDSA keys, by `kid`.
    private let eddsa: JWTKeyCollection?
    /// Their `kid`s: an EdDSA token must name one of them.
    private let kids: Set<String>
    /// The HS256 secret's key.
    private let hs256: JWTKeyCollection?
    /// The `iss` a token must carry, if any.
    public let issuer: String?
    /// The audience a token's `aud` must hold, if any.
    public let audience: String?

    /// How far a token's `nbf` may lie ahead of the server's clock: the backend's clock and the server's differ a
    /// little, and a token issued to be used at once must work at once.
    public static let clockSkew: TimeInterval = 60
    /// The longest issuer or audience the server may be given, in bytes.
    public static let maximumIssuerBytes = 1_024

    /// The shortest HS256 secret accepted, in bytes: a shorter one could be guessed.
    public static let minimumSecretBytes = 32
    /// The longest token checked, in bytes; a longer one is refused before it is parsed.
    public static let maximumTokenBytes = 8_192
    /// The longest subject (`sub`, the user) a token may carry, in bytes.
    public static let maximumSubjectBytes = 256

    /// Whether `subject` is in Unicode's normalization form C, byte for byte: the one spelling of a user the server
    /// takes (in a token, a share or a revocation).
    public static func isNormalized(_ subject: String) -> Bool {
        subject.utf8.elementsEqual(subject.precomposedStringWithCanonicalMapping.utf8)
    }

    /// Keys from a JWKS file (`{"keys": [...]}`, Ed25519 public keys, `"kty": "OKP"`, `"crv": "Ed25519"`, each with a
    /// `kid`) and from a file holding the HS256 secret (its bytes, a trailing newline left out), either or both.
    ///
    /// `issuer` and `audience`, when given, are what every token must carry in `iss` and `aud`.
    ///
    /// - Throws: ``ServerError`` `startup` when a file cannot be read, the JWKS does not decode or holds a key that is
    ///   not an Ed25519 public key with a `kid`, the secret is shorter than ``minimumSecretBytes``, neither file is
    ///   given, or the issuer or audience is empty or longer than ``maximumIssuerBytes``.
    public static func load(
        jwks: URL?, hs256Secret: URL?, issuer: String? = nil, audience: String? = nil
    ) async throws -> AppTokenKeys {
        guard jwks != nil || hs256Secret != nil else {
            throw ServerError(.startup, "app tokens need a JWKS file, an HS256 secret file, or both")
        }
        for (what, value) in [("issuer", issuer), ("audience", audience)] {
            if let value, value.isEmpty || value.utf8.count > maximumIssuerBytes {
                throw ServerError(.startup, "the app tokens' \(what) must have 1 to \(maximumIssuerBytes) bytes")
            }
        }
        var eddsa: JWTKeyCollection?
        var kids: Set<String> = []
        if let jwks {
            let json: String
            do { json = try String(contentsOf: jwks, encoding: .utf8) } catch {
                throw ServerError(.startup, "cannot read the JWKS file \(jwks.path)", cause: error)
            }
            let set: JWKS
            do { set = try JSONDecoder().decode(JWKS.self, from: Data(json.utf8)) } catch {
                throw ServerError(.startup, "the JWKS file \(jwks.path) does not decode", cause: error)
            }
            guard !set.keys.isEmpty else { throw ServerError(.startup, "the JWKS file \(jwks.path) holds no key") }
            let keys = JWTKeyCollection()
            for key in set.keys {
                guard key.keyType == .octetKeyPair, key.curve == .eddsa(.ed25519), key.privateExponent == nil,
                    key.keyIdentifier != nil
                else {
                    throw ServerError(
                        .startup,
                        "the JWKS file \(jwks.path) holds a key that is not an Ed25519 public key with a kid")
                }
                kids.insert(key.keyIdentifier!.string)
                do { try await keys.add(jwk: key) } catch {
                    throw ServerError(.startup, "a key of the JWKS file \(jwks.path) is not usable", cause: error)
                }
            }
            eddsa = keys
        }
        var hs256: JWTKeyCollection?
        if let hs256Secret {
            var secret: Data
            do { secret = try Data(contentsOf: hs256Secret) } catch {
                throw ServerError(.startup, "cannot read the HS256 secret file \(hs256Secret.path)", cause: error)
            }
            while secret.last == 0x0A || secret.last == 0x0D { secret.removeLast() }
            guard secret.count >= minimumSecretBytes else {
                throw ServerError(
                    .startup, "the HS256 secret must have at least \(minimumSecretBytes) bytes, not \(secret.count)")
            }
            hs256 = await JWTKeyCollection().add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        }
        return AppTokenKeys(eddsa: eddsa, kids: kids, hs256: hs256, issuer: issuer, audience: audience)
    }

    /// Whether `token` has the form of a JSON Web Token (three parts joined by dots), as the server's own tokens do
    /// not.
    static func isAppToken(_ token: String) -> Bool { token.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2 }

    /// Why a token was refused.
    enum Refused: Error, Equatable {
        /// Not a valid token of these keys: malformed, of another algorithm, badly signed, bad claims.
        case invalid(String)
        /// Valid but expired.
        case expired
        /// Valid, not for the whole library: for other libraries, or for the documents of the library it names in
        /// its `documents` claim, `claimed` (the server then looks for shares of the library with the user too).
        case otherLibrary(
            user: String, person: String, expires: ContinuousClock.Instant, claimed: [DocumentID: LibraryRole])
    }

    /// The grant of `token` for `library`, checked at `now`.
    func grant(_ token: String, library: String, now: Date) async -> Result<AccessGrant, Refused> {
        guard token.utf8.count <= Self.maximumTokenBytes else {
            return .failure(.invalid("the token is longer than \(Self.maximumTokenBytes) bytes"))
        }
        guard let header = Self.header(of: token) else {
            return .failure(.invalid("the token's header does not decode"))
        }
        let keys: JWTKeyCollection?
        switch header.alg {
        case "EdDSA":
            // Named, and one of the JWKS's: JWTKit would otherwise check it against its first key.
            guard let kid = header.kid, kids.contains(kid) else {
                return .failure(.invalid("an EdDSA token must name the kid of a key of the JWKS"))
            }
            keys = eddsa
        case "HS256": keys = hs256
        default:
            return .failure(.invalid("tokens signed with \(header.alg.prefix(16).debugDescription) are not accepted"))
        }
        guard let keys else { return .failure(.invalid("the server has no \(header.alg) key")) }
        let claims: AppTokenClaims
        do { claims = try await keys.verify(token, as: AppTokenClaims.self) } catch {
            return .failure(.invalid("the token is not valid: \(Self.describe(error))"))
        }
        guard claims.exp.value > now else { return .failure(.expired) }
        if let problem = claims.problem { return .failure(.invalid(problem)) }
        if let notBefore = claims.nbf?.value, notBefore.timeIntervalSince(now) > Self.clockSkew {
            return .failure(.invalid("the token is not valid before \(notBefore.timeIntervalSince1970) (nbf)"))
        }
        if let issuer, claims.iss != issuer {
            return .failure(.invalid("the token's issuer (iss) is not the one the server takes"))
        }
        if let audience, !(claims.aud?.value.contains(audience) ?? false) {
            return .failure(.invalid("the token's audience (aud) does not name this server's"))
        }
        // Seconds to the expiry, within a bound a Duration holds: a token of the far future lasts that long.
        let seconds = min(claims.exp.value.timeIntervalSince(now), Self.longestExpiry)
        let expires = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        guard (claims.libraries ?? []).contains(library) else {
            return .failure(
                .otherLibrary(
                    user: claims.sub.value, person: claims.person, expires: expires,
                    claimed: claims.documents(of: library)))
        }
        return .success(
            AccessGrant(
                key: SyncServer.userKeyPrefix + claims.sub.value, library: library, role: claims.role ?? .write,
                expires: expires, person: claims.person))
    }

    /// The longest a connection of an app token stays open before its expiry closes it, whatever its `exp` says
    /// (ten years).
    static let longestExpiry: TimeInterval = 10 * 365 * 86_400

    /// A token's header, when it decodes.
    private static func header(of token: String) -> Header? {
        guard let header = token.split(separator: ".", omittingEmptySubsequences: false).first,
            let bytes = Data(base64URLEncoded: String(header))
        else { return nil }
        return try? JSONDecoder().decode(Header.self, from: bytes)
    }

    private struct Header: Decodable {
        var alg: String
        var kid: String?
    }

    /// A short description of a verification error (JWTKit's own descriptions can be long).
    private static func describe(_ error: any Error) -> String {
        if let error = error as? JWTError { return String("\(error.errorType)".prefix(200)) }
        return String("\(error)".prefix(200))
    }
}

/// The claims of an app token (see ``AppTokenKeys``).
struct AppTokenClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    /// Not valid before (optional).
    var nbf: NotBeforeClaim?
    /// Who issued the token (optional; required when the server is given an issuer).
    var iss: String?
    /// Whom the token is for: one string or an array (optional; required when the server is given an audience).
    var aud: AudienceClaim?
    var libraries: [String]?
    var role: LibraryRole?
    /// The user's name as people read it, recorded as the person of the user's devices (`sub` when absent or
    /// unusable). Read leniently: identity providers put OpenID Connect's `name` in tokens, and one that is not text
    /// does not refuse the token.
    var name: String?
    /// Single documents the token grants, by library, each document (its identity's text) with its role.
    var documents: [String: [String: LibraryRole]]?

    private enum CodingKeys: String, CodingKey {
        case sub, exp, nbf, iss, aud, libraries, role, name, documents
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sub = try container.decode(SubjectClaim.self, forKey: .sub)
        exp = try container.decode(ExpirationClaim.self, forKey: .exp)
        nbf = try container.decodeIfPresent(NotBeforeClaim.self, forKey: .nbf)
        iss = try container.decodeIfPresent(String.self, forKey: .iss)
        aud = try container.decodeIfPresent(AudienceClaim.self, forKey: .aud)
        libraries = try container.decodeIfPresent([String].self, forKey: .libraries)
        role = try container.decodeIfPresent(LibraryRole.self, forKey: .role)
        name = (try? container.decodeIfPresent(String.self, forKey: .name)) ?? nil
        documents = try container.decodeIfPresent([String: [String: LibraryRole]].self, forKey: .documents)
    }

    /// The documents of `library` the `documents` claim grants, with their roles (the claim is checked by
    /// ``problem`` first).
    func documents(of library: String) -> [DocumentID: LibraryRole] {
        var granted: [DocumentID: LibraryRole] = [:]
        for (text, role) in documents?[library] ?? [:] {
            if let document = DocumentID(text) { granted[document] = role }
        }
        return granted
    }

    /// The person the server records for the devices of the token's connections: ``name`` when it has 1 to 256 bytes
    /// and no control or format character (a right-to-left override could make a report show another name), else
    /// the subject.
    var person: String {
        guard let name, !name.isEmpty, name.utf8.count <= Self.maximumSubjectBytes,
            !name.unicodeScalars.contains(where: {
                [.control, .format].contains($0.properties.generalCategory)
            })
        else { return sub.value }
        return name
    }

    /// The most libraries a token may name.
    static let maximumLibraries = 256
    /// The most documents a token may name, all libraries together.
    static let maximumDocuments = 256
    /// The longest subject, in bytes.
    static var maximumSubjectBytes: Int { AppTokenKeys.maximumSubjectBytes }

    /// What is wrong with the claims, if anything.
    var problem: String? {
        if sub.value.isEmpty || sub.value.utf8.count > Self.maximumSubjectBytes {
            return "the token's subject must have 1 to \(Self.maximumSubjectBytes) bytes"
        }
        // A control character (a NUL, say) would not be one user in every database the accounts may be kept in.
        if sub.value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "the token's subject holds a control character"
        }
        // Two spellings of one text (é as one scalar, or e and an accent) are one string to Swift and two to a
        // database: a subject is taken in one spelling only.
        if !AppTokenKeys.isNormalized(sub.value) {
            return "the token's subject is not in Unicode's normalization form C"
        }
        let libraries = self.libraries ?? []
        if libraries.count > Self.maximumLibraries {
            return "the token may name at most \(Self.maximumLibraries) libraries"
        }
        if let bad = libraries.first(where: { !AccountNames.isValid($0) }) {
            return "the token names a library that is not a valid name: \(bad.prefix(80).debugDescription)"
        }
        let documents = self.documents ?? [:]
        if documents.values.reduce(0, { $0 + $1.count }) > Self.maximumDocuments {
            return "the token may name at most \(Self.maximumDocuments) documents"
        }
        for (library, named) in documents.sorted(by: { $0.key < $1.key }) {
            guard AccountNames.isValid(library) else {
                return
                    "the token's documents name a library that is not a valid name: \(library.prefix(80).debugDescription)"
            }
            if let bad = named.keys.sorted().first(where: { DocumentID($0) == nil }) {
                return "the token names a document that is not an identity: \(bad.prefix(80).debugDescription)"
            }
            // One document spelt twice (in capitals and not) would have the role of whichever came last.
            if Set(named.keys.compactMap(DocumentID.init)).count != named.count {
                return "the token names a document of library \(library) twice"
            }
        }
        return nil
    }

    /// Expiry is checked against the server's clock by the caller.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

extension Data {
    /// Decodes base64url without padding (RFC 7515).
    init?(base64URLEncoded string: String) {
        var base64 = string.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !base64.contains("=") else { return nil }
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
