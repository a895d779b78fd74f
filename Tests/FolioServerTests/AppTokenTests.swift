import Crypto
import Folio
import FolioCore
import FolioServer
import FolioSync
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// Tokens an app's backend signs for its users (JSON Web Tokens, EdDSA or HS256), checked by a real `folio serve`:
/// which open a library and which are refused, a connection closed when its token expires, and a `read` token that
/// receives and stores nothing.
@Suite struct AppTokenTests {
    /// The app backend's keys: an Ed25519 signing key published in a JWKS file, and an HS256 secret.
    struct Backend {
        let signing = Curve25519.Signing.PrivateKey()
        let secret = Data((0..<48).map { UInt8(($0 * 37 + 11) & 0xFF) })
        let kid = "app-key-1"

        /// Writes the JWKS and the secret into `directory`; the server's arguments that name them.
        func arguments(in directory: TemporaryDirectory) throws -> [String] {
            let jwks = directory.file("jwks.json")
            let key =
                #"{"kty":"OKP","crv":"Ed25519","kid":"\#(kid)","x":"\#(Self.base64URL(signing.publicKey.rawRepresentation))"}"#
            try Data(#"{"keys":[\#(key)]}"#.utf8).write(to: jwks)
            let secretFile = directory.file("hs256.secret")
            try (secret + [0x0A]).write(to: secretFile)
            return ["--app-jwks", jwks.path, "--app-hs256-secret", secretFile.path]
        }

        /// A token signed as `alg` says (`EdDSA` with the signing key, `HS256` with the secret, `none` unsigned),
        /// with `claims` as its payload; `key` signs in place of the backend's own.
        func token(
            _ claims: [String: Any], alg: String = "EdDSA", kid: String? = nil, hmacKey: Data? = nil,
            signingKey: Curve25519.Signing.PrivateKey? = nil
        ) throws -> String {
            var header: [String: Any] = ["alg": alg, "typ": "JWT"]
            if let kid = kid ?? (alg == "EdDSA" ? self.kid : nil), !kid.isEmpty { header["kid"] = kid }
            let input =
                Self.base64URL(try JSONSerialization.data(withJSONObject: header, options: .sortedKeys)) + "."
                + Self.base64URL(try JSONSerialization.data(withJSONObject: claims, options: .sortedKeys))
            let signature: Data
            switch alg {
            case "EdDSA": signature = try (signingKey ?? signing).signature(for: Data(input.utf8))
            case "HS256":
                signature = Data(
                    HMAC<SHA256>.authenticationCode(
                        for: Data(input.utf8), using: SymmetricKey(data: hmacKey ?? secret)))
            default: signature = Data()
            }
            return input + "." + Self.base64URL(signature)
        }

        static func base64URL(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
    }

    /// Claims for `user` granting `libraries` with `role`, expiring `seconds` from now.
    static func claims(
        _ user: String = "ada", libraries: [String] = ["notes"], role: String? = "write", expiresIn seconds: Int = 600
    ) -> [String: Any] {
        var claims: [String: Any] = [
            "sub": user, "libraries": libraries, "exp": Int(Date().timeIntervalSince1970) + seconds,
        ]
        if let role { claims["role"] = role }
        return claims
    }

    @Test func aSignedTokenOpensTheLibrariesItNamesAndForgedOnesOpenNothing() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        func status(_ token: String) async throws -> Int {
            try await fixture.get("/v1/libraries/notes/sync", token: token).status
        }
        // Valid (426: the right token, but no WebSocket upgrade), both algorithms, and without a role (write).
        #expect(try await status(backend.token(Self.claims())) == 426)
        #expect(try await status(backend.token(Self.claims(), alg: "HS256")) == 426)
        #expect(try await status(backend.token(Self.claims(role: nil))) == 426)
        #expect(try await status(backend.token(Self.claims(libraries: ["photos", "notes"]))) == 426)
        // Valid from a few seconds ahead of the server's clock (the backend's clock may be ahead), and carrying an
        // issuer and an audience a server given none does not ask for.
        var soon = Self.claims()
        soon["nbf"] = Int(Date().timeIntervalSince1970) + 5
        soon["iss"] = "https://auth.example.com/"
        soon["aud"] = ["folio", "api"]
        #expect(try await status(backend.token(soon)) == 426)
        // Another library's.
        #expect(try await status(backend.token(Self.claims(libraries: ["photos"]))) == 403)
        // A token that names no library grants only what is shared with its user: nothing here.
        #expect(try await status(backend.token(Self.claims(libraries: []))) == 403)
        // Expired, forged, unsigned, confused, malformed.
        let refused: [(String, String)] = [
            ("expired", try backend.token(Self.claims(expiresIn: -5))),
            (
                "not valid for another ten minutes",
                try backend.token(Self.claims().merging(["nbf": Int(Date().timeIntervalSince1970) + 600]) { $1 })
            ),
            ("another Ed25519 key", try backend.token(Self.claims(), signingKey: Curve25519.Signing.PrivateKey())),
            (
                "another HS256 secret",
                try backend.token(Self.claims(), alg: "HS256", hmacKey: Data(repeating: 7, count: 48))
            ),
            ("alg none", try backend.token(Self.claims(), alg: "none")),
            ("alg RS256", try backend.token(Self.claims(), alg: "RS256")),
            (
                "HS256 keyed with the public key",
                try backend.token(
                    Self.claims(), alg: "HS256", hmacKey: backend.signing.publicKey.rawRepresentation)
            ),
            ("an unknown role", try backend.token(Self.claims(role: "owner"))),
            ("too many libraries", try backend.token(Self.claims(libraries: (0...256).map { "l\($0)" }))),
            ("a library that is not a name", try backend.token(Self.claims(libraries: ["../notes"]))),
            ("no expiry", try backend.token(["sub": "ada", "libraries": ["notes"]])),
            ("an empty subject", try backend.token(Self.claims(""))),
            ("a subject with a NUL", try backend.token(Self.claims("ada\u{0}"))),
            ("a subject not in normalization form C", try backend.token(Self.claims("jose\u{301}"))),
            ("a payload tampered with", try Self.tampered(backend.token(Self.claims(libraries: ["photos"])))),
            ("not base64", "a.b.c"),
            ("an unknown kid", try backend.token(Self.claims(), kid: "another-key")),
            ("no kid", try backend.token(Self.claims(), kid: "")),
        ]
        for (what, token) in refused {
            #expect(try await status(token) == 401, "\(what)")
        }
        // A WebSocket upgrade with an expired token is closed with 4402, one of another library with 4403, a forged
        // one with 4401.
        let expired = try RawWebSocket(
            port: fixture.server.port, library: "notes", token: try backend.token(Self.claims(expiresIn: -5)))
        #expect(try await offThePool { expired.closeCode(within: .seconds(5)) } == 4402)
        let forged = try RawWebSocket(
            port: fixture.server.port, library: "notes", token: try backend.token(Self.claims(), alg: "none"))
        #expect(try await offThePool { forged.closeCode(within: .seconds(5)) } == 4401)
        let other = try RawWebSocket(
            port: fixture.server.port, library: "notes", token: try backend.token(Self.claims(libraries: ["photos"])))
        #expect(try await offThePool { other.closeCode(within: .seconds(5)) } == 4403)
        // The server's own tokens still work beside them.
        #expect(try await status(try await fixture.token(for: "notes")) == 426)
        // A token of the far future is valid, and its connection lasts (the server does not fall over its expiry).
        var forever = Self.claims()
        forever["exp"] = 1e18
        let lasting = try RawWebSocket(port: fixture.server.port, library: "notes", token: try backend.token(forever))
        #expect(lasting.upgraded)
        _ = lasting.socket.send(RawWebSocket.frame(opcode: 2, HandDevice().hello()))
        #expect(try await offThePool { lasting.closeCode(within: .seconds(2)) } == nil)
        #expect(try await fixture.get("/health").status == 200)
    }

    /// With only a JWKS, an HS256 token is refused, even one keyed with the JWKS's public key (the classic confusion
    /// of a public key taken for a shared secret).
    @Test func aServerWithOnlyAJWKSRefusesHS256Tokens() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let arguments = try backend.arguments(in: directory)
        let fixture = try await ServerFixture.start(arguments: Array(arguments.prefix(2)))
        for key in [backend.secret, backend.signing.publicKey.rawRepresentation] {
            let token = try backend.token(Self.claims(), alg: "HS256", hmacKey: key)
            #expect(try await fixture.get("/v1/libraries/notes/sync", token: token).status == 401)
        }
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: backend.token(Self.claims())).status == 426)
    }

    /// A server given an issuer and an audience takes only tokens that carry both, whichever key signed them: keys
    /// of an identity provider also sign its tokens for other services.
    @Test func aServerGivenAnIssuerAndAnAudienceTakesOnlyTokensForIt() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let issuer = "https://auth.example.com/"
        let fixture = try await ServerFixture.start(
            arguments: try backend.arguments(in: directory) + ["--app-issuer", issuer, "--app-audience", "folio"])
        func status(iss: String?, aud: Any?, alg: String = "EdDSA") async throws -> Int {
            var claims = Self.claims()
            claims["iss"] = iss
            claims["aud"] = aud
            return try await fixture.get("/v1/libraries/notes/sync", token: backend.token(claims, alg: alg)).status
        }
        #expect(try await status(iss: issuer, aud: "folio") == 426)
        #expect(try await status(iss: issuer, aud: "folio", alg: "HS256") == 426)
        #expect(try await status(iss: issuer, aud: ["api", "folio"]) == 426)
        #expect(try await status(iss: nil, aud: "folio") == 401, "no issuer")
        #expect(try await status(iss: "https://auth.example.com", aud: "folio") == 401, "another issuer")
        #expect(try await status(iss: issuer, aud: nil) == 401, "no audience")
        #expect(try await status(iss: issuer, aud: "api") == 401, "another audience")
        #expect(try await status(iss: issuer, aud: ["api", "billing"]) == 401, "other audiences")
        #expect(try await status(iss: issuer, aud: 7) == 401, "an audience that is not text")
        // A WebSocket upgrade with a token for another audience is closed as a forged one is.
        var other = Self.claims()
        other["iss"] = issuer
        other["aud"] = "api"
        let socket = try RawWebSocket(port: fixture.server.port, library: "notes", token: try backend.token(other))
        #expect(try await offThePool { socket.closeCode(within: .seconds(5)) } == 4401)
    }

    /// `folio serve` refuses to start with an issuer or an audience but no keys, or with an empty one.
    @Test func anIssuerOrAudienceWithoutKeysOrEmptyStopsTheStart() async throws {
        let directory = try TemporaryDirectory()
        let keys = try Backend().arguments(in: directory)
        for arguments in [["--app-audience", "folio"], keys + ["--app-issuer", ""]] {
            let run = try await offThePool {
                try ToolProcess.start(
                    ["serve", "--port", "0", "--data", directory.file("data").path] + arguments
                ).wait()
            }
            #expect(run.status != 0, "\(arguments)")
            #expect(run.errors.contains("app"), "\(run.errors)")
        }
    }

    /// The payload of `token` with its grant widened to `notes`, the signature kept.
    static func tampered(_ token: String) throws -> String {
        let parts = token.split(separator: ".").map(String.init)
        let payload = Backend.base64URL(try JSONSerialization.data(withJSONObject: claims(), options: .sortedKeys))
        return parts[0] + "." + payload + "." + parts[2]
    }

    @Test func aServerWithoutAppKeysRefusesAppTokens() async throws {
        let fixture = try await ServerFixture.start()
        let token = try Backend().token(Self.claims())
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: token).status == 401)
    }

    @Test func aConnectionClosesWhenItsTokenExpires() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        let opened = ContinuousClock.now
        let socket = try RawWebSocket(
            port: fixture.server.port, library: "notes", token: try backend.token(Self.claims(expiresIn: 3)))
        #expect(socket.upgraded)
        _ = socket.socket.send(RawWebSocket.frame(opcode: 2, HandDevice().hello()))
        let close = try await offThePool { socket.closeCode(within: .seconds(15)) }
        #expect(close == 4402, "close \(String(describing: close))")
        #expect(socket.closeReason.contains("expired"), "\(socket.closeReason)")
        // Not before it expired (the expiry is in whole seconds: at least a second after the upgrade).
        #expect(ContinuousClock.now - opened > .seconds(1))
    }

    /// Revoking an app's user (`folio serve user revoke`, another process) closes their open connections with 4401
    /// within a few seconds and refuses their tokens from then on, whatever their expiry; other users go on; restoring
    /// them lets their tokens in again.
    @Test func aRevokedUsersConnectionsCloseAndTheirTokensAreRefused() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        let data = fixture.server.data.path
        let ada = try backend.token(Self.claims("ada"))
        let bob = try backend.token(Self.claims("bob"), alg: "HS256")
        let adaSocket = try RawWebSocket(port: fixture.server.port, library: "notes", token: ada)
        let bobSocket = try RawWebSocket(port: fixture.server.port, library: "notes", token: bob)
        #expect(adaSocket.upgraded && bobSocket.upgraded)
        _ = adaSocket.socket.send(RawWebSocket.frame(opcode: 2, HandDevice().hello()))
        _ = bobSocket.socket.send(RawWebSocket.frame(opcode: 2, HandDevice().hello()))
        let revoked = try await ToolRun.folio(["serve", "user", "revoke", "ada", "--data", data])
        #expect(revoked.status == 0, "\(revoked.errors)")
        let started = ContinuousClock.now
        let close = try await offThePool { adaSocket.closeCode(within: .seconds(20)) }
        #expect(close == 4401, "close \(String(describing: close))")
        #expect(adaSocket.closeReason.contains("revoked"), "\(adaSocket.closeReason)")
        // The server looks every second; a machine running the whole suite may take some seconds more.
        #expect(ContinuousClock.now - started < .seconds(15))
        #expect(try await offThePool { bobSocket.closeCode(within: .seconds(2)) } == nil, "another user goes on")
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: ada).status == 401)
        #expect(
            try await fixture.get("/v1/libraries/notes/sync", token: backend.token(Self.claims("ada"))).status == 401)
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: bob).status == 426)
        let list = try await ToolRun.folio(["serve", "user", "list", "--data", data])
        #expect(list.output.split(separator: "\n").dropFirst().map { $0.prefix { $0 != "\t" } } == ["ada"])
        let restored = try await ToolRun.folio(["serve", "user", "restore", "ada", "--data", data])
        #expect(restored.status == 0, "\(restored.errors)")
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: ada).status == 426)
        let again = try await ToolRun.folio(["serve", "user", "restore", "ada", "--data", data])
        #expect(again.status == 2, "restoring a user who is not revoked: \(again.errors)")
    }

    /// A `read` token's device receives the library's documents and edits; what it commits stays on it, and the
    /// server stores nothing of what a reader sends: its first change closes it with 4405.
    @Test func aReaderReceivesAndStoresNothing() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        let writer = try fixture.library("Writer")
        let reader = try fixture.library("Reader")
        let writerSync = try await writer.startSyncing(
            with: fixture.server.libraryURL("notes"), token: try backend.token(Self.claims("ada")))
        let readerSync = try await reader.startSyncing(
            with: fixture.server.libraryURL("notes"), token: try backend.token(Self.claims("bob", role: "read")))
        _ = try await firstEvent(of: readerSync, "the reader to hear it may only read") { $0 == .connection(.readOnly) }
        let note = try await writer.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("from the writer\n")])
        try await eventually("the note on the reader") { try await reader.info(of: note.id) != nil }
        let onReader = try await reader.open(note.id, as: TextDocument.self)
        try await eventually("the writer's line on the reader") { await onReader.model.text == "from the writer\n" }
        // The reader's own edit and document stay on it.
        try await onReader.edit([.append("from the reader\n")])
        try await onReader.save()
        let own = try await reader.create(TextDocument.self, named: "Reader's own", in: .shared)
        try await own.edit([.append("mine\n")])
        try await own.save()
        try await note.edit([.append("second line\n")])
        try await eventually("the writer's second line on the reader") {
            await onReader.model.text.contains("second line\n")
        }
        try await Task.sleep(for: .milliseconds(500))
        #expect(await note.model.text == "from the writer\nsecond line\n")
        #expect(try await writer.info(of: own.id) == nil)
        #expect(reader.syncsLive, "the reader's sync goes on")
        await readerSync.stop()
        // Connected again, the reader announces what it committed (ahead of the server in the note, a document the
        // server lacks): the session asks it for none of it, and goes on giving it the writer's edits.
        let again = try await reader.startSyncing(
            with: fixture.server.libraryURL("notes"), token: try backend.token(Self.claims("bob", role: "read")))
        let caughtUp = try await firstEvent(of: again, "the reader's second session to finish") { event in
            if case .syncFinished = event { true } else { false }
        }
        #expect(caughtUp.contains(.connection(.readOnly)), "\(caughtUp)")
        try await note.edit([.append("third line\n")])
        try await eventually("the writer's third line on the reader") {
            await onReader.model.text.contains("third line\n")
        }
        #expect(await note.model.text == "from the writer\nsecond line\nthird line\n")
        #expect(try await writer.info(of: own.id) == nil)
        #expect(reader.syncsLive, "the reader's sync goes on")
        await again.stop()
        await writerSync.stop()

        // A reader that sends a change anyway (a client that does not heed the notice) is closed with 4405, after the
        // notice as the server's first frame, and nothing of it is stored.
        let hand = HandDevice()
        let document = DocumentID(UUIDBytes(bytes: Array(repeating: 0xAB, count: 16)))
        let socket = try RawWebSocket(
            port: fixture.server.port, library: "notes", token: try backend.token(Self.claims("eve", role: "read")))
        #expect(socket.upgraded)
        let first = try await offThePool { socket.nextFrame(within: .seconds(5)) }
        #expect(first.map { try? SyncFrame(decoding: $0.payload) } == SyncFrame.readOnlyNotice)
        _ = socket.socket.send(RawWebSocket.frame(opcode: 2, hand.hello()))
        _ = socket.socket.send(
            RawWebSocket.frame(opcode: 2, hand.changes([hand.change(seq: 1, of: document, lamport: 1)], of: document)))
        #expect(try await offThePool { socket.closeCode(within: .seconds(10)) } == 4405)
        let probe = try await fixture.token(for: "notes")
        #expect(try await storedSeq(of: document, device: hand, port: fixture.server.port, token: probe) == 0)
        // Even an empty `changes` message closes a reader.
        let empty = try RawWebSocket(
            port: fixture.server.port, library: "notes", token: try backend.token(Self.claims("eve", role: "read")))
        _ = empty.socket.send(RawWebSocket.frame(opcode: 2, hand.hello()))
        _ = empty.socket.send(RawWebSocket.frame(opcode: 2, hand.changes([], of: document)))
        #expect(try await offThePool { empty.closeCode(within: .seconds(10)) } == 4405)
    }

    /// The read-only notice cannot be made by a member: an empty `changes` message of the all-zero document (which
    /// would make the server's notice of it the very same bytes) is no notice at all, and a client takes the notice
    /// only as a connection's first frame.
    @Test func noMemberCanMakeTheOthersReadOnly() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let phone = try fixture.library("Phone")
        let laptop = try fixture.library("Laptop")
        let phoneSync = try await phone.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        let laptopSync = try await laptop.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        let listener = HandDevice()
        let watching = try RawWebSocket(port: fixture.server.port, library: "notes", token: token)
        _ = watching.socket.send(RawWebSocket.frame(opcode: 2, listener.hello()))
        let spoofer = HandDevice()
        let spoofing = try RawWebSocket(port: fixture.server.port, library: "notes", token: token)
        _ = spoofing.socket.send(RawWebSocket.frame(opcode: 2, spoofer.hello()))
        let zero = DocumentID(UUIDBytes(high: 0, low: 0))
        for _ in 0..<3 { _ = spoofing.socket.send(RawWebSocket.frame(opcode: 2, spoofer.changes([], of: zero))) }
        // The watcher hears no such notice.
        let frames = try await offThePool {
            var frames: [SyncFrame] = []
            let deadline = ContinuousClock.now + .seconds(2)
            while ContinuousClock.now < deadline {
                if let frame = watching.nextFrame(within: .milliseconds(100)),
                    let decoded = try? SyncFrame(decoding: frame.payload)
                {
                    frames.append(decoded)
                }
            }
            return frames
        }
        #expect(!frames.contains(SyncFrame.readOnlyNotice))
        // And the devices still write to each other.
        let note = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("from the phone\n")])
        try await eventually("the note on the laptop") { try await laptop.info(of: note.id) != nil }
        await phoneSync.stop()
        await laptopSync.stop()
    }

    /// The server's own tokens take a role too: one issued with `--role read` reads and writes nothing.
    @Test func aServerTokenIssuedToReadReadsOnly() async throws {
        let fixture = try await ServerFixture.start()
        let writerToken = try await fixture.token(for: "notes")
        let issued = try await ToolRun.folio([
            "serve", "token", "create", "--library", "notes", "--role", "read", "--data", fixture.server.data.path,
        ])
        #expect(issued.status == 0, "\(issued.errors)")
        let readToken = issued.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let list = try await ToolRun.folio(["serve", "token", "list", "--data", fixture.server.data.path])
        #expect(
            list.output.split(separator: "\n").dropFirst().map { $0.split(separator: "\t").last } == ["write", "read"])
        let writer = try fixture.library("Writer")
        let reader = try fixture.library("Reader")
        let writerSync = try await writer.startSyncing(with: fixture.server.libraryURL("notes"), token: writerToken)
        let readerSync = try await reader.startSyncing(with: fixture.server.libraryURL("notes"), token: readToken)
        _ = try await firstEvent(of: readerSync, "the reader to hear it may only read") { $0 == .connection(.readOnly) }
        let note = try await writer.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("from the writer\n")])
        try await eventually("the note on the reader") { try await reader.info(of: note.id) != nil }
        let own = try await reader.create(TextDocument.self, named: "Reader's own", in: .shared)
        try await own.save()
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await writer.info(of: own.id) == nil)
        let hand = HandDevice()
        let document = DocumentID(UUIDBytes(bytes: Array(repeating: 0xAC, count: 16)))
        let socket = try RawWebSocket(port: fixture.server.port, library: "notes", token: readToken)
        _ = socket.socket.send(RawWebSocket.frame(opcode: 2, hand.hello()))
        _ = socket.socket.send(
            RawWebSocket.frame(opcode: 2, hand.changes([hand.change(seq: 1, of: document, lamport: 1)], of: document)))
        #expect(try await offThePool { socket.closeCode(within: .seconds(10)) } == 4405)
        #expect(try await storedSeq(of: document, device: hand, port: fixture.server.port, token: writerToken) == 0)
        await readerSync.stop()
        await writerSync.stop()
    }
}
