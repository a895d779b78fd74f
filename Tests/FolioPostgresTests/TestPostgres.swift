import FolioChildProcess
import FolioPostgres
import FolioTesting
import FolioToolRunner
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The PostgreSQL cluster the tests use: the one `FOLIO_TEST_POSTGRES_URL` names (README's test command starts one
/// with `Tools/postgres/cluster run`), else one this process starts with that script and stops when it exits. Each
/// test gets a database of its own (``fresh(_:)``).
enum TestPostgres {
    /// The cluster's `postgres` database, where test databases are made.
    static let cluster: Result<PostgresLocation, ClusterError> = {
        if let url = ProcessInfo.processInfo.environment["FOLIO_TEST_POSTGRES_URL"], !url.isEmpty {
            return Result { try PostgresLocation(url: url) }.mapError { ClusterError(message: "\($0)") }
        }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tools/postgres/cluster").path
        let outcome: ChildProcess.Outcome
        do { outcome = try ChildProcess.run(script, arguments: ["start"]) } catch {
            return .failure(ClusterError(message: "cannot run \(script): \(error)"))
        }
        let words = outcome.outputText.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard outcome.termination.succeeded, words.count == 2 else {
            return .failure(ClusterError(message: "\(script) start failed: \(outcome.errorText)"))
        }
        started.withLock { $0 = (script, words[1]) }
        atexit {
            if let (script, directory) = TestPostgres.started.withLock({ $0 }) {
                _ = try? ChildProcess.run(script, arguments: ["stop", directory])
            }
        }
        return Result { try PostgresLocation(url: words[0]) }.mapError { ClusterError(message: "\($0)") }
    }()

    /// The script and directory of the cluster this process started, stopped at exit.
    static let started = Mutex<(String, String)?>(nil)

    struct ClusterError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// A new, empty database for one test; dropped when the returned value goes.
    static func fresh(_ test: String = #function) async throws -> TestDatabase {
        let cluster = try cluster.get()
        let name = "folio_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await admin(cluster) { client in
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        }
        return TestDatabase(location: cluster.database(name), cluster: cluster)
    }

    /// Runs `body` with a client of the cluster's `postgres` database.
    @discardableResult
    static func admin<T: Sendable>(
        _ cluster: PostgresLocation, _ body: @escaping @Sendable (PostgresClient) async throws -> T
    ) async throws -> T {
        var configuration = PostgresClient.Configuration(
            host: cluster.host, port: cluster.port, username: cluster.username, password: cluster.password,
            database: cluster.database, tls: .disable)
        configuration.options.maximumConnections = 1
        var logger = Logger(label: "test.admin")
        logger.logLevel = .error
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}

/// A database of one test.
final class TestDatabase: Sendable {
    let location: PostgresLocation
    let cluster: PostgresLocation

    init(location: PostgresLocation, cluster: PostgresLocation) {
        self.location = location
        self.cluster = cluster
    }

    /// The database's URL, as `folio serve --postgres` takes it.
    var url: String {
        "postgres://\(location.username)@\(location.host):\(location.port)/\(location.database)?sslmode=disable"
    }

    /// Opens the database as a server does (migrating it).
    func open(connections: Int = 4) throws -> PostgresServerDatabase {
        var location = self.location
        location.tls = .disable
        return try PostgresServerDatabase(location: location, connections: connections)
    }

    /// Runs `sql` in the database.
    func execute(_ sql: String) async throws {
        var location = self.location
        location.tls = .disable
        try await TestPostgres.admin(location) { client in
            try await client.query(PostgresQuery(unsafeSQL: sql))
        }
    }

    /// `folio serve --postgres` processes over the database, one for each of `names`, each with its data
    /// directory of that name in `directory`.
    func servers(_ names: [String], in directory: TemporaryDirectory) async throws -> [ServerProcess] {
        var servers: [ServerProcess] = []
        for name in names {
            servers.append(
                try await ServerProcess.start(data: try directory.subdirectory(name), arguments: ["--postgres", url]))
        }
        return servers
    }

    /// The server processes (backends) of the clients connected to the database now, this query's own aside.
    func backends() async throws -> [Int32] {
        var location = self.location
        location.tls = .disable
        let name = location.database
        return try await TestPostgres.admin(location) { client in
            var pids: [Int32] = []
            for try await pid in try await client.query(
                "SELECT pid FROM pg_stat_activity WHERE datname = \(name) AND pid <> pg_backend_pid() ORDER BY pid"
            ).decode(Int32.self) {
                pids.append(pid)
            }
            return pids
        }
    }

    /// The number of rows of `table`.
    func count(_ table: String) async throws -> Int {
        var location = self.location
        location.tls = .disable
        return try await TestPostgres.admin(location) { client in
            var count = 0
            for try await value in try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"))
                .decode(Int64.self)
            {
                count = Int(value)
            }
            return count
        }
    }

    deinit {
        let name = location.database
        let cluster = cluster
        // Best effort, in the background: a database left behind goes with the throwaway cluster.
        Task.detached {
            try? await TestPostgres.admin(cluster) { client in
                try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
            }
        }
    }
}
