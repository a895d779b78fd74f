import FolioPostgres
import FolioServer
import FolioToolRunner
import Testing

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

    @Test func aDatabaseThatCannotBeReachedFailsWithinTheTimeout() throws {
        // A port nothing listens on (the cluster's, plus one, is free on loopback in practice; any refusal will do).
        var location = try TestPostgres.cluster.get()
        location.port = 1
        location.tls = .disable
        let started = ContinuousClock.now
        #expect(throws: ServerError.self) { try PostgresServerDatabase(location: location, timeout: .seconds(3)) }
        #expect(ContinuousClock.now - started < .seconds(10))
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
