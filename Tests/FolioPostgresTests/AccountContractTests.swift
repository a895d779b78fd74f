import FolioCore
import FolioPostgres
import FolioServer
import FolioTesting
import Foundation
import Testing

/// The same contract for every implementation of `ServerAccounts`: the data directory's SQLite file and PostgreSQL.
@Suite(.serialized) struct AccountContractTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    /// The accounts of a new, empty storage of `backend`, and what keeps it alive.
    private func accounts(_ backend: Backend) async throws -> (any ServerAccounts, Any) {
        switch backend {
        case .sqlite:
            let directory = try TemporaryDirectory()
            return (try AccountStore(at: directory.file("accounts.sqlite")), directory)
        case .postgres:
            let test = try await TestPostgres.fresh()
            let database = try test.open()
            return (PostgresAccounts(database: database), (test, database))
        }
    }

    @Test(arguments: Backend.allCases) func aTokenGrantsItsLibraryUntilRevoked(_ backend: Backend) async throws {
        let (accounts, kept) = try await accounts(backend)
        defer { withExtendedLifetime(kept) {} }
        var random = SplitMix64(seed: 7)
        let issued = try accounts.createToken(
            library: "notes", account: "ada", now: Date(timeIntervalSince1970: 1_000), random: &random)
        #expect(issued.secret.hasPrefix("folio_") && issued.secret.count == 70)
        #expect(issued.token.id.hasPrefix("tok_") && issued.token.id.count == 16)
        let found = try #require(try accounts.authenticate(issued.secret))
        #expect(found == issued.token)
        #expect(try accounts.authenticate("folio_" + String(repeating: "0", count: 64)) == nil)
        #expect(try accounts.authenticate(String(repeating: "x", count: 10_000)) == nil, "an overlong secret")

        let second = try accounts.createToken(
            library: "notes", account: "ada", now: Date(timeIntervalSince1970: 2_000), random: &random)
        #expect(try accounts.tokens().map(\.id) == [issued.token.id, second.token.id], "in the order issued")
        // A role, kept with the token.
        let reader = try accounts.createToken(
            library: "notes", account: "ada", role: .read, now: Date(timeIntervalSince1970: 2_500), random: &random)
        #expect(reader.token.role == .read && issued.token.role == .write)
        #expect(try accounts.authenticate(reader.secret)?.role == .read)
        #expect(try accounts.tokens().map(\.role) == [.write, .write, .read])
        try accounts.revoke(reader.token.id, now: Date(timeIntervalSince1970: 2_600))

        try accounts.revoke(issued.token.id, now: Date(timeIntervalSince1970: 3_000))
        #expect(try accounts.authenticate(issued.secret) == nil)
        #expect(try accounts.authenticate(second.secret) != nil)
        // Of the ids asked about, those revoked or unknown, whenever the revocation was stamped.
        #expect(
            try accounts.revokedTokens(among: [second.token.id, issued.token.id, "tok_000000000000"])
                == [issued.token.id, "tok_000000000000"].sorted())
        #expect(try accounts.revokedTokens(among: [second.token.id]).isEmpty)
        #expect(try accounts.revokedTokens(among: []).isEmpty)
        // Revoking again keeps the first time.
        try accounts.revoke(issued.token.id, now: Date(timeIntervalSince1970: 4_000))
        #expect(try accounts.tokens().first?.revoked == Date(timeIntervalSince1970: 3_000))
        #expect {
            try accounts.revoke("tok_000000000000", now: Date())
        } throws: { ($0 as? ServerError)?.code == .notFound }
        // A library's tokens alone.
        let photos = try accounts.createToken(
            library: "photos", account: "ada", now: Date(timeIntervalSince1970: 5_000), random: &random)
        #expect(try accounts.tokens(of: "notes").map(\.id) == [issued.token.id, second.token.id, reader.token.id])
        #expect(try accounts.tokens(of: "photos") == [photos.token])
        #expect(try accounts.tokens(of: "nothing").isEmpty)
    }

    @Test(arguments: Backend.allCases) func aLibraryBelongsToOneAccount(_ backend: Backend) async throws {
        let (accounts, kept) = try await accounts(backend)
        defer { withExtendedLifetime(kept) {} }
        _ = try accounts.createToken(library: "notes", account: "ada")
        #expect {
            try accounts.createToken(library: "notes", account: "bob")
        } throws: { ($0 as? ServerError)?.code == .conflict }
        #expect(try accounts.tokens().count == 1, "nothing of the refused token is stored")
        for (library, account) in [
            ("", "ada"), (".hidden", "ada"), ("notes", "a b"), (String(repeating: "n", count: 65), "ada"),
        ] {
            #expect {
                try accounts.createToken(library: library, account: account)
            } throws: { ($0 as? ServerError)?.code == .invalidName }
        }
    }

    @Test(arguments: Backend.allCases) func aDeviceIsBoundToTheFirstLibraryItWritesInto(_ backend: Backend) async throws
    {
        let (accounts, kept) = try await accounts(backend)
        defer { withExtendedLifetime(kept) {} }
        let a = Device.named("A").id
        let b = Device.named("B").id
        #expect(try accounts.boundElsewhere([a, b], than: "notes").isEmpty, "nothing is bound yet")
        #expect(try accounts.bind([a], to: "notes").isEmpty)
        #expect(try accounts.bind([a], to: "notes").isEmpty, "binding again is harmless")
        #expect(try accounts.bind([b, a], to: "photos") == [a], "A belongs to notes")
        #expect(try accounts.boundElsewhere([a, b], than: "notes") == [b])
        #expect(try accounts.boundElsewhere([a, b], than: "photos") == [a])
        #expect(try accounts.bind([], to: "notes").isEmpty)
    }

    @Test(arguments: Backend.allCases) func aRevokedUserStaysRevokedUntilRestored(_ backend: Backend) async throws {
        let (accounts, kept) = try await accounts(backend)
        defer { withExtendedLifetime(kept) {} }
        #expect(try accounts.revokedUsers().isEmpty)
        #expect(try accounts.revokedUsers(among: ["ada", "bob"]).isEmpty)
        try accounts.revokeUser("bob", now: Date(timeIntervalSince1970: 2_000))
        try accounts.revokeUser("ada", now: Date(timeIntervalSince1970: 3_000))
        // Revoking again keeps the first time.
        try accounts.revokeUser("bob", now: Date(timeIntervalSince1970: 4_000))
        #expect(
            try accounts.revokedUsers()
                == [
                    RevokedUser(subject: "bob", revoked: Date(timeIntervalSince1970: 2_000)),
                    RevokedUser(subject: "ada", revoked: Date(timeIntervalSince1970: 3_000)),
                ])
        #expect(try accounts.revokedUsers(among: ["carl", "bob", "ada", "bob"]) == ["ada", "bob"])
        #expect(try accounts.revokedUsers(among: []).isEmpty)
        try accounts.restoreUser("bob")
        #expect(try accounts.revokedUsers(among: ["ada", "bob", "a\u{0}b"]) == ["ada"])
        #expect { try accounts.restoreUser("bob") } throws: { ($0 as? ServerError)?.code == .notFound }
        #expect { try accounts.restoreUser("a\u{0}b") } throws: { ($0 as? ServerError)?.code == .notFound }
        for subject in [
            "", String(repeating: "u", count: AppTokenKeys.maximumSubjectBytes + 1), "a\u{0}b", "jose\u{301}",
        ] {
            #expect { try accounts.revokeUser(subject, now: Date()) } throws: {
                ($0 as? ServerError)?.code == .invalidName
            }
        }
        // A subject of any characters is one user.
        try accounts.revokeUser("o'brien; DROP", now: Date(timeIntervalSince1970: 5_000))
        #expect(try accounts.revokedUsers(among: ["o'brien; DROP"]) == ["o'brien; DROP"])
    }

    @Test(arguments: Backend.allCases) func aShareGrantsAUserALibraryWithARole(_ backend: Backend) async throws {
        let (accounts, kept) = try await accounts(backend)
        defer { withExtendedLifetime(kept) {} }
        #expect(try accounts.shares(of: "notes").isEmpty)
        try accounts.share("notes", with: "bob", role: .read, now: Date(timeIntervalSince1970: 2_000))
        try accounts.share("notes", with: "ada", role: .write, now: Date(timeIntervalSince1970: 3_000))
        try accounts.share("sketches", with: "ada", role: .admin, now: Date(timeIntervalSince1970: 4_000))
        // Sharing again changes the role and keeps the first time.
        try accounts.share("notes", with: "bob", role: .resolve, now: Date(timeIntervalSince1970: 5_000))
        #expect(
            try accounts.shares(of: "notes")
                == [
                    LibraryShare(
                        library: "notes", subject: "bob", role: .resolve, created: Date(timeIntervalSince1970: 2_000)),
                    LibraryShare(
                        library: "notes", subject: "ada", role: .write, created: Date(timeIntervalSince1970: 3_000)),
                ])
        #expect(
            try accounts.shares(among: ["carl", "ada", "bob"], in: ["sketches", "notes", "photos"]).map {
                "\($0.library)/\($0.subject)/\($0.role)"
            } == ["notes/ada/write", "notes/bob/resolve", "sketches/ada/admin"])
        #expect(try accounts.shares(among: ["ada"], in: ["sketches"]).map(\.library) == ["sketches"])
        #expect(try accounts.shares(among: [], in: ["notes"]).isEmpty)
        #expect(try accounts.shares(among: ["ada"], in: []).isEmpty)
        try accounts.unshare("notes", from: "ada")
        #expect(try accounts.shares(of: "notes").map(\.subject) == ["bob"])
        #expect { try accounts.unshare("notes", from: "ada") } throws: { ($0 as? ServerError)?.code == .notFound }
        for (library, subject) in [("no/pe", "ada"), ("notes", ""), ("notes", "a\u{0}b")] {
            #expect { try accounts.share(library, with: subject, role: .read, now: Date()) } throws: {
                ($0 as? ServerError)?.code == .invalidName
            }
        }
        #expect(try accounts.shares(among: ["a\u{0}b"], in: ["notes", "no\u{0}tes"]).isEmpty)
        #expect { try accounts.unshare("notes", from: "a\u{0}b") } throws: { ($0 as? ServerError)?.code == .notFound }
    }

    @Test(arguments: Backend.allCases) func aDocumentIsSharedApartFromItsLibrary(_ backend: Backend) async throws {
        let (accounts, kept) = try await accounts(backend)
        defer { withExtendedLifetime(kept) {} }
        let plan = DocumentID(UUIDBytes(high: 1, low: 2))
        let diary = DocumentID(UUIDBytes(high: 3, low: 4))
        try accounts.share("notes", document: plan, with: "bob", role: .write, now: Date(timeIntervalSince1970: 1_000))
        try accounts.share("notes", document: diary, with: "bob", role: .read, now: Date(timeIntervalSince1970: 2_000))
        try accounts.share("notes", with: "bob", role: .read, now: Date(timeIntervalSince1970: 3_000))
        // A new role for one document leaves the other and the library's share as they were.
        try accounts.share(
            "notes", document: plan, with: "bob", role: .resolve, now: Date(timeIntervalSince1970: 4_000))
        let listed = try accounts.shares(of: "notes").map {
            "\($0.subject) \($0.document?.description ?? "-") \($0.role)"
        }
        #expect(listed == ["bob \(plan) resolve", "bob \(diary) read", "bob - read"])
        #expect(
            try accounts.shares(among: ["bob"], in: ["notes"]).map(\.document)
                == [nil, plan, diary].sorted {
                    ($0?.description ?? "") < ($1?.description ?? "")
                })
        // Ending the library's share leaves the documents'; a document not shared is not found.
        try accounts.unshare("notes", from: "bob")
        #expect(try accounts.shares(of: "notes").compactMap(\.document) == [plan, diary])
        #expect {
            try accounts.unshare("notes", document: DocumentID(UUIDBytes(high: 9, low: 9)), from: "bob")
        } throws: {
            ($0 as? ServerError)?.code == .notFound && "\($0)".contains("document")
        }
        try accounts.unshare("notes", document: plan, from: "bob")
        #expect(try accounts.shares(of: "notes").compactMap(\.document) == [diary])
    }

    @Test(arguments: Backend.allCases) func aLibraryTakenOfflineStaysOfflineUntilBroughtBack(_ backend: Backend)
        async throws
    {
        let (accounts, kept) = try await accounts(backend)
        defer { withExtendedLifetime(kept) {} }
        #expect(try accounts.offlineLibraries().isEmpty)
        try accounts.takeOffline("notes", now: Date(timeIntervalSince1970: 2_000))
        try accounts.takeOffline("Archive", now: Date(timeIntervalSince1970: 3_000))
        try accounts.takeOffline("notes", now: Date(timeIntervalSince1970: 4_000))
        #expect(
            try accounts.offlineLibraries()
                == [
                    OfflineLibrary(library: "Archive", since: Date(timeIntervalSince1970: 3_000)),
                    OfflineLibrary(library: "notes", since: Date(timeIntervalSince1970: 2_000)),
                ])
        #expect(try accounts.offlineSince("notes") == Date(timeIntervalSince1970: 2_000))
        try accounts.bringOnline("notes")
        #expect(try accounts.offlineLibraries().map(\.library) == ["Archive"])
        #expect(try accounts.offlineSince("notes") == nil)
        #expect(try accounts.offlineSince("no\u{0}pe") == nil)
        #expect { try accounts.bringOnline("notes") } throws: { ($0 as? ServerError)?.code == .notFound }
        #expect { try accounts.takeOffline("../x", now: Date()) } throws: { ($0 as? ServerError)?.code == .invalidName }
    }
}
