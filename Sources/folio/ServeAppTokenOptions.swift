import ArgumentParser
import FolioServer
import Foundation

/// `folio serve`'s keys of the tokens an app's backend signs for its users (docs/server.md, "Tokens from the app").
struct ServeAppTokenOptions: ParsableArguments {
    @Option(
        name: .customLong("app-jwks"),
        help: "A JWKS file of the Ed25519 public keys (each with a kid) that sign app tokens (alg EdDSA).")
    var jwks: String?

    @Option(
        name: .customLong("app-hs256-secret"),
        help: "A file holding the shared secret (at least 32 bytes) that signs app tokens (alg HS256).")
    var hs256Secret: String?

    /// The keys, or `nil` when neither file is given (only the server's own tokens are accepted).
    func load() async throws -> AppTokenKeys? {
        guard jwks != nil || hs256Secret != nil else { return nil }
        return try await AppTokenKeys.load(
            jwks: jwks.map { URL(fileURLWithPath: $0) }, hs256Secret: hs256Secret.map { URL(fileURLWithPath: $0) })
    }
}
