import FolioCore
import FolioServer
import FolioTesting
import Foundation
import GRDB
import Testing

/// An account database of an older build opens with what it held: the shares of whole libraries it kept stay, and
/// documents can be shared beside them.
@Suite struct AccountMigrationTests {
    @Test func sharesOfAnAccountDatabaseBeforeDocumentSharesStay() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("accounts.sqlite")
        // The tables as `accounts-5-shares` left them, with one share, written as that build did.
        let old = try DatabaseQueue(path: url.path)
        try old.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('accounts-1'), ('accounts-2-revoked-index'),
                        ('accounts-3-revoked-users'), ('accounts-4-token-roles'), ('accounts-5-shares');
                    CREATE TABLE library (name TEXT PRIMARY KEY NOT NULL, account TEXT NOT NULL);
                    CREATE TABLE token (
                        id TEXT PRIMARY KEY NOT NULL, hash BLOB NOT NULL UNIQUE,
                        library TEXT NOT NULL REFERENCES library(name),
                        created REAL NOT NULL, revoked REAL, role TEXT NOT NULL DEFAULT 'write');
                    CREATE INDEX token_revoked ON token(revoked) WHERE revoked IS NOT NULL;
                    CREATE TABLE device (id BLOB PRIMARY KEY NOT NULL, library TEXT NOT NULL);
                    CREATE TABLE revoked_user (subject TEXT PRIMARY KEY NOT NULL, revoked REAL NOT NULL);
                    CREATE TABLE share (
                        library TEXT NOT NULL, subject TEXT NOT NULL, role TEXT NOT NULL, created REAL NOT NULL,
                        PRIMARY KEY (library, subject));
                    CREATE INDEX share_subject ON share(subject);
                    CREATE TABLE offline_library (name TEXT PRIMARY KEY NOT NULL, since REAL NOT NULL);
                    INSERT INTO share VALUES ('notes', 'bob', 'read', 1000);
                    """)
        }
        try old.close()

        let accounts = try AccountStore(at: url)
        #expect(
            try accounts.shares(of: "notes")
                == [
                    LibraryShare(
                        library: "notes", subject: "bob", role: .read, created: Date(timeIntervalSince1970: 1000))
                ])
        let plan = DocumentID(UUIDBytes(high: 7, low: 7))
        try accounts.share("notes", document: plan, with: "bob", role: .write, now: Date(timeIntervalSince1970: 2000))
        #expect(try accounts.shares(among: ["bob"], in: ["notes"]).map(\.document) == [nil, plan])
        // Opening again migrates nothing more.
        let again = try AccountStore(at: url)
        #expect(try again.shares(of: "notes").count == 2)
    }
}
