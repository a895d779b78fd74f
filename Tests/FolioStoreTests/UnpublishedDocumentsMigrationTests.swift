import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import GRDB
import Testing

/// A store written before it kept a table of unpublished documents gets one when it is opened, holding the
/// documents whose lifecycle puts them in the local container, so that they stay on the device from then on.
@Suite(.workPool) struct UnpublishedDocumentsMigrationTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    @Test func anOlderStoreKeepsItsLocalDocumentsUnpublished() throws {
        let created = DocumentID(UUIDBytes(high: 1, low: 1))
        let movedAway = DocumentID(UUIDBytes(high: 1, low: 2))
        let movedHere = DocumentID(UUIDBytes(high: 1, low: 3))
        let store = try directory.openStore("old.sqlite", as: .named("A"))
        func create(_ document: DocumentID, in container: DocumentContainer) throws {
            try store.append(
                .lifecycle(.create(name: "Notes", type: "public.plain-text", container: container)), to: document)
        }
        try create(created, in: .local)
        try create(movedAway, in: .local)
        try store.append(.lifecycle(.move(to: .shared)), to: movedAway)
        try create(movedHere, in: .shared)
        try store.append(Fixtures.edit("text"), to: movedHere)
        try store.append(.lifecycle(.move(to: .local)), to: movedHere)
        try store.close()

        let queue = try DatabaseQueue(path: directory.file("old.sqlite").path)
        try queue.write { db in
            try db.execute(
                sql: """
                    DROP TABLE unpublished;
                    DELETE FROM grdb_migrations WHERE identifier = 'v5 unpublished documents';
                    """)
        }
        try queue.close()

        let reopened = try directory.openStore("old.sqlite", as: .named("A"))
        #expect(try reopened.unpublished.documents() == [created, movedHere])
        #expect(try reopened.verify().isSound)
    }
}
