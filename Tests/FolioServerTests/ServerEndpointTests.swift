import Folio
import FolioSync
import FolioTesting
import Foundation
import Testing

@testable import FolioClient

/// Which addresses a client accepts for its bearer token.
@Suite struct ServerEndpointTests {
    static func endpoint(_ address: String, allowsCleartext: Bool = false) throws -> ServerEndpoint {
        try ServerEndpoint(url: URL(string: address)!, token: "tok_secret", allowsCleartext: allowsCleartext)
    }

    /// A token sent over `ws://` (or `http://`) to another machine crosses the network in cleartext: refused.
    @Test(arguments: [
        "ws://example.com/v1/libraries/notes", "http://example.com:8080/v1/libraries/notes",
        "ws://192.168.1.20:8080/v1/libraries/notes", "ws://10.0.0.1/v1/libraries/notes/sync",
        "ws://[2001:db8::1]:8080/v1/libraries/notes", "ws://localhost.example.com/v1/libraries/notes",
        "ws://128.0.0.1/v1/libraries/notes", "ws://[::2]/v1/libraries/notes",
    ])
    func cleartextToAnotherMachineIsRefused(address: String) throws {
        let error = try #require(throws: SyncError.self) { try Self.endpoint(address) }
        #expect(error.code == .malformed)
        #expect(error.message.contains("cleartext"), "\(error.message)")
        // Unless the app says so.
        #expect(try Self.endpoint(address, allowsCleartext: true).url.absoluteString == address)
    }

    /// A token is what a header carries: an app's signed token of up to 8 KiB is taken (one of 256 bytes was
    /// refused once, so that no library could sync with a JSON Web Token); an empty one, a longer one or one with a
    /// space or a control character is refused.
    @Test func tokensUpToEightKiBOfHeaderCharactersAreTaken() throws {
        let url = URL(string: "ws://127.0.0.1:8080/v1/libraries/notes")!
        let long = String(repeating: "a", count: ServerEndpoint.maximumTokenBytes)
        #expect(try ServerEndpoint(url: url, token: long).token == long)
        #expect(try ServerEndpoint(url: url, token: String(repeating: "b", count: 900)).token.count == 900)
        for bad in ["", long + "a", "two words", "line\nbreak", "é"] {
            let error = try #require(throws: SyncError.self) { try ServerEndpoint(url: url, token: bad) }
            #expect(error.code == .malformed, "\(bad.prefix(10).debugDescription)")
        }
    }

    /// Loopback never leaves the machine; `wss://` and `https://` are encrypted: both go without an opt-in.
    @Test(arguments: [
        "ws://127.0.0.1:8080/v1/libraries/notes", "ws://127.8.9.10/v1/libraries/notes",
        "ws://localhost:8080/v1/libraries/notes", "ws://LocalHost/v1/libraries/notes",
        "http://[::1]:8080/v1/libraries/notes", "ws://[0:0:0:0:0:0:0:1]/v1/libraries/notes",
        "ws://[::ffff:127.0.0.1]/v1/libraries/notes",
        "wss://example.com/v1/libraries/notes", "https://192.168.1.20:8443/v1/libraries/notes/sync",
    ])
    func loopbackAndEncryptedAddressesAreAccepted(address: String) throws {
        let endpoint = try Self.endpoint(address)
        #expect(endpoint.url.absoluteString == address)
        #expect(!endpoint.syncAddress.contains("[["), "\(endpoint.syncAddress)")
        #expect(endpoint.syncAddress.hasSuffix("/v1/libraries/notes/sync"), "\(endpoint.syncAddress)")
    }

    /// A library's live sync refuses a cleartext address the same way, and takes the same opt-in.
    @Test func startSyncingRefusesCleartextToAnotherMachine() async throws {
        let directory = try TemporaryDirectory()
        let library = try DocumentLibrary(at: try directory.subdirectory("phone"), deviceName: "Phone")
        let url = URL(string: "ws://192.0.2.1:8080/v1/libraries/notes")!
        await #expect(throws: SyncError.self) { try await library.startSyncing(with: url, token: "tok_secret") }
        let sync = try await library.startSyncing(with: url, token: "tok_secret", allowsCleartext: true)
        await sync.stop()
    }
}
