import ArgumentParser
import FolioPostgres
import FolioServer
import Foundation
import Logging

/// `folio serve`: runs the sync server; `folio serve token …` manages its bearer tokens.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the sync server: devices sync their libraries with it over WebSocket.",
        discussion: """
            Listens on 127.0.0.1:8080 unless told otherwise, and keeps its data (accounts, tokens, one log per \
            library) in ./folio-data, or in the PostgreSQL database --postgres names (several servers may share \
            it). A device connects to ws://HOST:PORT/v1/libraries/NAME with a token from \
            `folio serve token create --library NAME`. SIGINT or SIGTERM stops it within --shutdown-grace.
            """,
        subcommands: [TokenCommand.self, UserCommand.self, AdminCommand.self, ExportCommand.self, ImportCommand.self]
    )

    @OptionGroup var data: ServeDataOptions

    @OptionGroup(title: "Budgets") var budgets: ServeBudgetOptions

    @OptionGroup(title: "Connections") var connections: ServeConnectionOptions

    @OptionGroup(title: "Presence") var presence: ServePresenceOptions

    @OptionGroup(title: "App tokens") var appTokens: ServeAppTokenOptions

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one (printed at start).")
    var port = 8080

    @Option(help: "The most connections open at once; further sync requests get 503.")
    var maxConnections = ServerLimits().connections

    @Option(help: "Seconds a client may leave what it was sent unread before it is closed as too slow.")
    var stallTimeout = 60

    mutating func validate() throws {
        guard (0...65_535).contains(port) else {
            throw ValidationError("--port must be within 0...65535")
        }
        guard (1...1_000_000).contains(maxConnections) else {
            throw ValidationError("--max-connections must be within 1...1000000")
        }
        guard (1...3_600).contains(stallTimeout) else {
            throw ValidationError("--stall-timeout must be within 1...3600")
        }
        guard !host.isEmpty else { throw ValidationError("--host must not be empty") }
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .info
            return handler
        }
        let server: SyncServer
        let keys: AppTokenKeys?
        do { keys = try await appTokens.load() } catch { throw CommandFailure.checkFailed("\(error)") }
        let database = try data.openDatabase()
        defer { database?.close() }
        do {
            server = try SyncServer(
                configuration: .init(
                    host: host, port: port, dataDirectory: data.directory,
                    limits: presence.applied(
                        to: connections.applied(
                            to: budgets.applied(
                                to: ServerLimits(connections: maxConnections, stallTimeout: .seconds(stallTimeout))))),
                    appTokens: keys),
                storage: database.map { PostgresStorage(database: $0, dataDirectory: data.directory) })
        } catch {
            throw CommandFailure.checkFailed("\(error)")
        }
        let host = self.host
        do {
            try await server.run { port in
                // One line on standard output, for scripts and tests that started the server on port 0.
                let line = "folio serve: listening on http://\(host.contains(":") ? "[\(host)]" : host):\(port)\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            }
        } catch {
            throw CommandFailure.checkFailed("\(error)")
        }
    }
}

/// `folio serve`'s bounds on connections: how long they may take and how many one token, library or address may hold.
struct ServeConnectionOptions: ParsableArguments {
    @Option(help: "Seconds a connection has to send a whole request (408 for a first request past it).")
    var requestTimeout = ServerLimits().requestTimeout.seconds

    @Option(help: "Connections open at once without a WebSocket of a valid token; further ones are closed at once.")
    var maxPendingConnections = ServerLimits().pendingConnections

    @Option(help: "WebSocket connections open at once with one token; further upgrades are refused (1013).")
    var maxConnectionsPerToken = ServerLimits().connectionsPerToken

    @Option(help: "WebSocket connections open at once to one library; further upgrades are refused (1013).")
    var maxConnectionsPerLibrary = ServerLimits().connectionsPerLibrary

    @Option(help: "WebSocket connections open at once from one address (raise it behind a proxy); further get 1013.")
    var maxConnectionsPerAddress = ServerLimits().connectionsPerAddress

    @Option(
        help:
            "Changes one token or app user may send a second, in bursts of ten seconds' worth; past it their connections are read more slowly."
    )
    var changesPerSecond = ServerLimits().changesPerSecond

    @Option(help: "Server tokens a library may have, revoked ones included; the admin API issues no more (409).")
    var tokensPerLibrary = ServerLimits().tokensPerLibrary

    @Option(help: "Shares a library may have, of the library and of its documents; the admin API makes no more (409).")
    var sharesPerLibrary = ServerLimits().sharesPerLibrary

    @Option(help: "Seconds a WebSocket has, from its upgrade, to send its hello (then 1008).")
    var helloTimeout = ServerLimits().helloTimeout.seconds

    @Option(help: "Seconds the server takes at most to stop after SIGTERM or SIGINT.")
    var shutdownGrace = ServerLimits().shutdownGrace.seconds

    func validate() throws {
        for (flag, value) in [
            ("--request-timeout", requestTimeout), ("--hello-timeout", helloTimeout),
            ("--shutdown-grace", shutdownGrace),
        ] where !(0.01...3_600).contains(value) {
            throw ValidationError("\(flag) must be within 0.01...3600 seconds")
        }
        for (flag, value) in [
            ("--max-pending-connections", maxPendingConnections),
            ("--max-connections-per-token", maxConnectionsPerToken),
            ("--max-connections-per-library", maxConnectionsPerLibrary),
            ("--max-connections-per-address", maxConnectionsPerAddress),
            ("--changes-per-second", changesPerSecond), ("--tokens-per-library", tokensPerLibrary),
            ("--shares-per-library", sharesPerLibrary),
        ] where !(1...1_000_000).contains(value) {
            throw ValidationError("\(flag) must be within 1...1000000")
        }
    }

    func applied(to limits: ServerLimits) -> ServerLimits {
        var limits = limits
        limits.requestTimeout = .milliseconds(Int64(requestTimeout * 1000))
        limits.pendingConnections = maxPendingConnections
        limits.connectionsPerToken = maxConnectionsPerToken
        limits.connectionsPerLibrary = maxConnectionsPerLibrary
        limits.connectionsPerAddress = maxConnectionsPerAddress
        limits.changesPerSecond = changesPerSecond
        limits.tokensPerLibrary = tokensPerLibrary
        limits.sharesPerLibrary = sharesPerLibrary
        limits.helloTimeout = .milliseconds(Int64(helloTimeout * 1000))
        limits.shutdownGrace = .milliseconds(Int64(shutdownGrace * 1000))
        return limits
    }
}

extension Duration {
    /// The duration in seconds, for a command-line default.
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// The data directory and database options, shared by `serve` and its token commands.
struct ServeDataOptions: ParsableArguments {
    @Option(name: .customLong("data"), help: "The server's data directory.")
    var path = "folio-data"

    @Option(
        name: .customLong("postgres"),
        help: ArgumentHelp(
            "Keep accounts and logs in this PostgreSQL database (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE), shared by every server process that names it; FOLIO_POSTGRES_URL when not given.",
            valueName: "url"))
    var postgresURL: String?

    @Option(help: "The most connections to PostgreSQL open at once.")
    var postgresConnections = PostgresServerDatabase.defaultConnections

    var directory: URL { URL(fileURLWithPath: path, isDirectory: true) }

    /// The database's URL: the option's, else the environment's.
    var postgres: String? {
        postgresURL ?? ProcessInfo.processInfo.environment["FOLIO_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func validate() throws {
        guard (1...PostgresServerDatabase.maximumConnections).contains(postgresConnections) else {
            throw ValidationError(
                "--postgres-connections must be within 1...\(PostgresServerDatabase.maximumConnections)")
        }
        if let postgres {
            do { _ = try PostgresLocation(url: postgres) } catch let error as ServerError {
                throw ValidationError(error.message)
            }
        }
    }

    /// The PostgreSQL database, when one is named.
    func openDatabase() throws -> PostgresServerDatabase? {
        guard let postgres else { return nil }
        do {
            return try PostgresServerDatabase(
                location: try PostgresLocation(url: postgres), connections: postgresConnections)
        } catch {
            throw CommandFailure.checkFailed("cannot open the server's database: \(error)")
        }
    }

    /// The server's storage: the data directory's files, or the PostgreSQL database (with the logs' copies in
    /// `scratch`, a directory the caller deletes). Takes no lock: the commands that use it say when a server must be
    /// stopped first.
    func openStorage(scratch: URL) throws -> any ServerStorage {
        if let database = try openDatabase() { return PostgresStorage(database: database, dataDirectory: scratch) }
        do {
            let directory = ServerDataDirectory(self.directory)
            try directory.create()
            return try DirectoryStorage(directory: directory)
        } catch {
            throw CommandFailure.checkFailed("cannot open the server's data in \(path): \(error)")
        }
    }

    /// The account database, without the server's lock: token commands run beside a running server. A new data
    /// directory is created readable by its owner only, as the server creates it.
    func openAccounts() throws -> any ServerAccounts {
        if let database = try openDatabase() { return PostgresAccounts(database: database) }
        do {
            return try ServerDataDirectory(directory).openAccounts()
        } catch {
            throw CommandFailure.checkFailed("cannot open the server's data in \(path): \(error)")
        }
    }

    /// What `body` makes of the account database: a ``ServerError`` of one of the `refused` codes is the user's
    /// input at fault, any other failure a failed check.
    func withAccounts<Result>(
        refusing refused: Set<ServerErrorCode> = [], _ body: (any ServerAccounts) throws -> Result
    ) throws -> Result {
        let accounts = try openAccounts()
        do {
            return try body(accounts)
        } catch let error as ServerError where refused.contains(error.code) {
            throw CommandFailure.invalidInput(error.message)
        } catch {
            throw CommandFailure.checkFailed("\(error)")
        }
    }
}

/// `folio serve token create|list|revoke`.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Issue, list and revoke the bearer tokens that grant libraries.",
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a token for a library (created in the account if new); prints the secret once.")

        @OptionGroup var data: ServeDataOptions

        @Option(help: "The library the token grants.")
        var library: String

        @Option(help: "The account the library belongs to.")
        var account = "default"

        @Option(help: "What the token grants: read (receives, writes nothing), write, resolve or admin.")
        var role = LibraryRole.write

        func run() throws {
            let issued = try data.withAccounts(refusing: [.invalidName, .conflict]) {
                try $0.createToken(library: library, account: account, role: role)
            }
            print(issued.secret)
            FileHandle.standardError.write(
                Data(
                    "issued \(issued.token.id) (\(role.rawValue)) for library \(library) (account \(account)); the secret above is shown only now. Devices connect to ws://HOST:PORT/v1/libraries/\(library)\n"
                        .utf8))
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tokens (never their secrets).")

        @OptionGroup var data: ServeDataOptions

        func run() throws {
            let tokens = try data.withAccounts { try $0.tokens() }
            let format = ISO8601DateFormatter()
            print("id\tlibrary\taccount\tcreated\tstatus\trole")
            for token in tokens {
                let status = token.revoked.map { "revoked \(format.string(from: $0))" } ?? "valid"
                print(
                    "\(token.id)\t\(token.library)\t\(token.account)\t\(format.string(from: token.created))\t\(status)\t\(token.role.rawValue)"
                )
            }
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a token: new connections with it are refused, and a running server closes open ones.")

        @OptionGroup var data: ServeDataOptions

        @Argument(help: "The token's id (as `list` shows it).")
        var id: String

        func run() throws {
            try data.withAccounts(refusing: [.notFound]) { try $0.revoke(id) }
            print("revoked \(id)")
        }
    }
}

/// `folio serve user revoke|restore|list`: the app's users whose tokens (signed by the app's backend) are refused.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Revoke, restore and list the app's users whose tokens the server refuses.",
        subcommands: [Revoke.self, Restore.self, List.self]
    )

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Revoke a user (the sub of their app tokens): their tokens are refused, and a running server closes their connections."
        )

        @OptionGroup var data: ServeDataOptions

        @Argument(help: "The user, as the sub claim of their tokens names them.")
        var subject: String

        func run() throws {
            try data.withAccounts(refusing: [.invalidName]) { try $0.revokeUser(subject) }
            print("revoked user \(TerminalText.escaped(subject))")
        }
    }

    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Let a revoked user in again: their valid tokens are accepted from now on.")

        @OptionGroup var data: ServeDataOptions

        @Argument(help: "The user, as the sub claim of their tokens names them.")
        var subject: String

        func run() throws {
            try data.withAccounts(refusing: [.notFound]) { try $0.restoreUser(subject) }
            print("restored user \(TerminalText.escaped(subject))")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the revoked users.")

        @OptionGroup var data: ServeDataOptions

        func run() throws {
            let users = try data.withAccounts { try $0.revokedUsers() }
            let format = ISO8601DateFormatter()
            print("user\trevoked")
            for user in users { print("\(TerminalText.escaped(user.subject))\t\(format.string(from: user.revoked))") }
        }
    }
}

extension LibraryRole: ExpressibleByArgument {}
