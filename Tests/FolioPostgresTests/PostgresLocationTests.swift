import FolioPostgres
import FolioServer
import Testing

/// Connection URLs are read strictly: every part checked, the password never repeated.
@Suite struct PostgresLocationTests {
    @Test func aFullURLIsReadPartByPart() throws {
        let location = try PostgresLocation(url: "postgresql://folio:s3cret@db.example.org:6543/notes?sslmode=require")
        #expect(location.host == "db.example.org")
        #expect(location.port == 6543)
        #expect(location.username == "folio")
        #expect(location.password == "s3cret")
        #expect(location.database == "notes")
        #expect(location.tls == .require)
        #expect(!location.description.contains("s3cret"), "the description leaves the password out")
    }

    @Test func thePortAndEncryptionHaveDefaults() throws {
        let location = try PostgresLocation(url: "postgres://folio@127.0.0.1/folio")
        #expect(location.port == 5432)
        #expect(location.password == nil)
        #expect(location.tls == .prefer)
        #expect(location.database("other").database == "other")
    }

    @Test(arguments: [
        ("mysql://folio@host/db", "scheme"),
        ("postgres://host/db", "no user"),
        ("postgres://folio@/db", "no host"),
        ("postgres://folio@host", "no database"),
        ("postgres://folio@host/", "no database"),
        ("postgres://folio@host:99999/db", "port"),
        ("postgres://folio@host/db?sslmode=allow", "sslmode"),
        ("postgres://folio@host/db#top", "fragment"),
        ("postgres://folio@host/db?application_name=x", "not supported"),
        ("not a url at all", "expected"),
    ])
    func aBadURLIsRefusedSayingWhy(url: String, reason: String) {
        #expect {
            try PostgresLocation(url: url)
        } throws: { error in
            guard let error = error as? ServerError else { return false }
            return error.code == .invalidName && error.message.contains(reason)
        }
    }

    @Test func anIPv6AddressLosesItsBrackets() throws {
        let location = try PostgresLocation(url: "postgres://folio@[::1]:6000/folio?sslmode=verify-full")
        #expect(location.host == "::1")
        #expect(location.tls == .verifyFull)
        #expect(location.description == "postgres://folio@[::1]:6000/folio?sslmode=verify-full")
    }

    @Test func anOverlongURLIsRefused() {
        let url = "postgres://folio@host/" + String(repeating: "d", count: PostgresLocation.maximumURLLength)
        #expect(throws: ServerError.self) { try PostgresLocation(url: url) }
    }

    @Test func aPasswordNeverAppearsInAnError() {
        #expect {
            try PostgresLocation(url: "postgres://folio:hunter2@host/db?sslmode=sometimes")
        } throws: { error in
            !"\(error)".contains("hunter2")
        }
    }
}
