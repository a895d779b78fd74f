import FolioStore
import Foundation
import Logging

/// Where a server keeps its accounts and its libraries' logs: the data directory's SQLite files
/// (``DirectoryStorage``, the default), or a database that several server processes share (the FolioPostgres
/// module's `PostgresStorage`).
public protocol ServerStorage: Sendable {
    /// The accounts, libraries, tokens and device bindings.
    var accounts: any ServerAccounts { get }
    /// Opens the log of library `name`, creating it when it is new. The server opens each library once and keeps it.
    ///
    /// - Throws: ``ServerError`` `storage`.
    func openLog(of library: String, logger: Logger) throws -> any ServerLog
    /// Whether library `name` has a log (``openLog(of:logger:)`` would open one rather than create it).
    ///
    /// - Throws: ``ServerError`` `storage`.
    func hasLog(of library: String) throws -> Bool
    /// Why the storage cannot serve now (its database is unreachable, say), or `nil` while it can: `GET /health`
    /// answers 503 with it.
    var unhealthyReason: String? { get }
    /// How many times the storage became unable to serve (``unhealthyReason`` went from `nil` to a reason) since it
    /// opened: `GET /metrics` gives it as `folio_storage_outages_total`, so that an outage shorter than the interval
    /// between two probes of `GET /health` is seen.
    var outageCount: UInt64 { get }
    /// Calls `stored` with a library's name each time another server process stored changes of it, or with `nil`
    /// when any library may have grown unseen (the storage lost its connection for a while), until the storage is
    /// released. Storage that only this process writes never calls it.
    func watch(_ stored: @escaping @Sendable (String?) -> Void)
    /// Passes a presence frame a device of `library` sent to this process on to the other processes of the storage,
    /// at most once and never stored (presence is the latest state of something that changes many times a second).
    func publishPresence(_ frame: [UInt8], of library: String)
    /// Calls `received` in order with each presence frame another process published, and its library's name.
    func watchPresence(_ received: @escaping @Sendable (String, [UInt8]) -> Void)
}

extension ServerStorage {
    /// Zero: storage that cannot become unreachable has no outages.
    public var outageCount: UInt64 { 0 }
    /// Never calls `stored`: only this process writes.
    public func watch(_ stored: @escaping @Sendable (String?) -> Void) {}
    /// Nothing: no other process shares this storage.
    public func publishPresence(_ frame: [UInt8], of library: String) {}
    /// Never calls `received`: no other process shares this storage.
    public func watchPresence(_ received: @escaping @Sendable (String, [UInt8]) -> Void) {}
}

/// The server's storage in its data directory (``ServerDataDirectory``): the accounts in `accounts.sqlite`, each
/// library's log in a SQLite file of its own in `libraries/`.
public final class DirectoryStorage: ServerStorage {
    /// The data directory.
    public let directory: ServerDataDirectory
    /// See ``ServerStorage/accounts``.
    public let accounts: any ServerAccounts
    private let durability: Durability

    /// Opens the account database of `directory` (see ``ServerDataDirectory/openAccounts()``).
    ///
    /// - Throws: ``ServerError`` `storage`.
    public init(directory: ServerDataDirectory, durability: Durability = .normal) throws {
        self.directory = directory
        self.durability = durability
        accounts = try directory.openAccounts()
    }

    /// See ``ServerStorage/openLog(of:logger:)``.
    public func openLog(of library: String, logger: Logger) throws -> any ServerLog {
        let url = try directory.libraryFile(library, logger: logger)
        let log = try SQLiteServerLog(at: url, durability: durability)
        try ServerDataDirectory.makePrivate(databaseAt: url)
        return log
    }

    /// See ``ServerStorage/hasLog(of:)``: whether the library's file (or its file of the earlier layout) is there.
    public func hasLog(of library: String) throws -> Bool {
        let libraries = directory.url.appendingPathComponent("libraries", isDirectory: true)
        return [ServerDataDirectory.libraryFileName(library), library + ".sqlite"].contains { name in
            FileManager.default.fileExists(atPath: libraries.appendingPathComponent(name).path)
        }
    }

    /// Always `nil`: local files are there as long as the process is.
    public var unhealthyReason: String? { nil }
}
