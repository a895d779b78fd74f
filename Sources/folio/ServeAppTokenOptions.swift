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

    @Option(
        name: .customLong("app-issuer"),
        help: "The issuer every app token must name in its iss claim (the backend's or identity provider's).")
    var issuer: String?

    @Option(
        name: .customLong("app-audience"),
        help: "The audience every app token's aud claim must hold: what the backend issues Folio's tokens for.")
    var audience: String?

    /// The keys, or `nil` when neither file is given (only the server's own tokens are accepted).
    ///
    /// - Throws: ``ServerError`` `startup` for an issuer or audience without keys to check tokens with, and what
    ///   ``AppTokenKeys/load(jwks:hs256Secret:issuer:audience:)`` throws.
    func load() async throws -> AppTokenKeys? {
        guard jwks != nil || hs256Secret != nil else {
            if issuer != nil || audience != nil {
                throw ServerError(.startup, "--app-issuer and --app-audience need --app-jwks or --app-hs256-secret")
            }
            return nil
        }
        return try await AppTokenKeys.load(
            jwks: jwks.map { URL(fileURLWithPath: $0) }, hs256Secret: hs256Secret.map { URL(fileURLWithPath: $0) },
            issuer: issuer, audience: audience)
    }
}
