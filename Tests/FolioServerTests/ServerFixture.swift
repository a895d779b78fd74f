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

    private init(directory: TemporaryDirectory, server: ServerProcess) {
        self.directory = directory
        self.server = server
    }

    /// Starts a server with its data in a new temporary directory.
    ///
    /// Unless `arguments` set it, the hello timeout is 120 s: a device's hello must reach the library, not the
    /// timeout, however loaded the machine running the suite is (the tests of the timeout set their own).
    static func start(arguments: [String] = [], _ file: String = #fileID) async throws -> ServerFixture {
        let directory = try TemporaryDirectory(file)
        let patient = arguments.contains("--hello-timeout") ? arguments : ["--hello-timeout", "120"] + arguments
        let server = try await ServerProcess.start(data: try directory.subdirectory("server"), arguments: patient)
        return ServerFixture(directory: directory, server: server)
    }

    /// A token for `library`.
    func token(for library: String, account: String = "default") async throws -> String {
        try await server.token(for: library, account: account)
    }

    // Not waited for: the process ends at once, and its pipes' readers end with it.
    deinit { server.send(SIGKILL) }

    /// An HTTP GET on the server: status and body.
    func get(_ path: String, token: String? = nil) async throws -> (status: Int, body: String) {
        var request = URLRequest(url: URL(string: server.base + path)!)
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// An HTTP request of `method` on the server, with `body` as JSON when given: status and body.
    func request(
        _ method: String, _ path: String, token: String? = nil, body: Data? = nil
    ) async throws -> (status: Int, body: String) {
        var request = URLRequest(url: URL(string: server.base + path)!)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// The value of a counter or gauge of `GET /metrics` (no labels), nil when it is not there.
    func metric(_ name: String) async throws -> Double? {
        let line = try await get("/metrics").body.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.dropFirst(name.count + 1)) }
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
    // A last look: a test starved of threads may wake only after the deadline.
    if try await condition() { return }
    Issue.record("timed out after \(timeout) waiting for \(what)")
    throw CancellationError()
}

/// Waits for the first event of `sync` that `matches`, for at most `timeout`; records an issue and throws on timeout.
func firstEvent(
    of sync: LibrarySync, within timeout: Duration = .seconds(30), _ what: String,
    matching matches: @escaping @Sendable (LibraryEvent) -> Bool
) async throws -> [LibraryEvent] {
    let seen = try await withThrowingTaskGroup(of: [LibraryEvent]?.self) { group in
        group.addTask {
            var events: [LibraryEvent] = []
            for await event in sync.events {
                events.append(event)
                if matches(event) { return events }
            }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return first
    }
    guard let seen else {
        Issue.record("timed out after \(timeout) waiting for \(what)")
        throw CancellationError()
    }
    return seen
}
