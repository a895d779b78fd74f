import Folio
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real `folio serve` on loopback with its data in a temporary directory, and helpers to talk to it.
final class ServerFixture {
    let directory: TemporaryDirectory
    let server: ServerProcess

    init(_ file: String = #fileID) throws {
        directory = try TemporaryDirectory(file)
        server = try ServerProcess(data: try directory.subdirectory("server"))
    }

    deinit { server.kill() }

    /// An HTTP GET on the server: status and body.
    func get(_ path: String, token: String? = nil) async throws -> (status: Int, body: String) {
        var request = URLRequest(url: URL(string: server.base + path)!)
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// A new library in the fixture's directory.
    func library(_ name: String, policy: ConflictPolicy = ConflictPolicy(default: .merge)) throws -> DocumentLibrary {
        try DocumentLibrary(at: directory.subdirectory(name), deviceName: name, conflictPolicy: policy)
    }
}

/// Waits until `condition` holds, checking every 20 ms, for at most `timeout`.
func eventually(
    within timeout: Duration = .seconds(30), _ what: String, _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    Issue.record("timed out after \(timeout) waiting for \(what)")
    throw CancellationError()
}
