import FolioPostgres
import FolioServer
import FolioToolRunner
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The schema is migrated once, forward only, and a database from a newer Folio is refused.
@Suite(.serialized) struct PostgresSchemaTests {
    @Test func aNewDatabaseIsMigratedAndOpeningAgainChangesNothing() async throws {
        let test = try await TestPostgres.fresh()
        let first = try test.open()
        first.close()
        let second = try test.open()
        second.close()
        let applied = try await test.names()
        #expect(applied == PostgresSchema.names)
    }

    @Test func serversStartingTogetherMigrateOnce() async throws {
        let test = try await TestPostgres.fresh()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask { try await offThePool { try test.open().close() } }
            }
            try await group.waitForAll()
        }
        #expect(try await test.names() == PostgresSchema.names)
    }

    @Test func aDatabaseFromANewerFolioIsRefused() async throws {
        let test = try await TestPostgres.fresh()
        try test.open().close()
        try await test.execute("INSERT INTO folio_schema (position, name) VALUES (999, '999 from the future')")
        #expect {
            try test.open()
        } throws: { error in
            guard let error = error as? ServerError else { return false }
            return error.code == .storage && error.message.contains("newer Folio")
                && error.message.contains("999 from the future")
        }
    }

    @Test func aDatabaseThatNeverAnswersFailsWithinTheTimeout() throws {
        // A socket that takes connections (the kernel's backlog) and never says a word.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 }
        }
        try #require(bound && listen(listener, 16) == 0)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        var location = try PostgresLocation(url: "postgres://folio@127.0.0.1/folio?sslmode=disable")
        location.port = Int(UInt16(bigEndian: address.sin_port))
        let started = ContinuousClock.now
        #expect {
            try PostgresServerDatabase(location: location, timeout: .seconds(2))
        } throws: { error in
            (error as? ServerError)?.message.contains("no answer within") == true
        }
        #expect(ContinuousClock.now - started < .seconds(8), "the timeout bounds the wait")
    }

    @Test func aPoolTooSmallForItsListenersIsRefused() throws {
        let location = try TestPostgres.cluster.get()
        #expect(throws: ServerError.self) { try PostgresServerDatabase(location: location, connections: 3) }
    }
}

extension TestDatabase {
    /// The migrations the database lists.
    func names() async throws -> [String] {
        var location = self.location
        location.tls = .disable
        return try await TestPostgres.admin(location) { client in
            var names: [String] = []
            for try await name in try await client.query("SELECT name FROM folio_schema ORDER BY position")
                .decode(String.self)
            {
                names.append(name)
            }
            return names
        }
    }
}
