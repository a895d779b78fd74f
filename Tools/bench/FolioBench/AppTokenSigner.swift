import Crypto
import Foundation

/// Tokens as an app's backend signs them for `folio serve --app-jwks` (EdDSA, Ed25519): the key's JWKS file, and a
/// token per user.
struct AppTokenSigner {
    let key = Curve25519.Signing.PrivateKey()
    let kid = "bench-key"

    /// Writes the JWKS that publishes the key to `file`.
    func writeJWKS(to file: URL) throws {
        let x = Self.base64URL(key.publicKey.rawRepresentation)
        let jwks = #"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"\#(kid)","x":"\#(x)"}]}"#
        try Data(jwks.utf8).write(to: file)
    }

    /// A token of `user` granting `library` as a writer for a day.
    func token(user: String, library: String) throws -> String {
        let header = #"{"alg":"EdDSA","kid":"\#(kid)","typ":"JWT"}"#
        let expiry = Int(Date().timeIntervalSince1970) + 86_400
        let claims = #"{"exp":\#(expiry),"libraries":["\#(library)"],"role":"write","sub":"\#(user)"}"#
        let input = Self.base64URL(Data(header.utf8)) + "." + Self.base64URL(Data(claims.utf8))
        return input + "." + Self.base64URL(try key.signature(for: Data(input.utf8)))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
