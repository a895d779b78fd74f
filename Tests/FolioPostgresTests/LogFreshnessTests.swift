import FolioCore
import FolioPostgres
import FolioServer
import FolioStore
import FolioTesting
import Foundation
import Logging
import Synchronization
import Testing

/// Two processes' storages over one database, each listening: a log's copy reads what the other stored once the
/// other's notification arrives, and serves from itself in between.
@Suite(.serialized) struct LogFreshnessTests {
    static let document = DocumentID(UUIDBytes("5f0c0000-0000-4000-8000-0000000000e1")!)

    @Test func aCopyTakesWhatAnotherProcessStoredOnceItsNotificationArrives() async throws {
        let test = try await TestPostgres.fresh()
        let directory = try TemporaryDirectory()
        let (first, second) = (try test.open(), try test.open())
        let storages = [
            PostgresStorage(database: first, dataDirectory: try directory.subdirectory("first")),
            PostgresStorage(database: second, dataDirectory: try directory.subdirectory("second")),
        ]
        let heard = Heard()
        for (index, storage) in storages.enumerated() {
            storage.watch { payload in if payload == "notes" { heard.counts.withLock { $0[index] += 1 } } }
        }
        try await waitFor("both listening") {
            first.isListening(on: "folio_changes") && second.isListening(on: "folio_changes")
        }
        let logger = Logger(label: "test")
        let logs = try storages.map { try $0.openLog(of: "notes", logger: logger) }
        #expect(try logs[1].vector(of: Self.document).changeCount == 0)

        // Each side writes in turn; the other's copy has it once the notification arrived, and says what grew.
        let devices = [Device.named("A"), Device.named("B")]
        let stores = try devices.map { try ChangeLogStore(inMemoryNamed: $0.name, device: $0) }
        var expected = VersionVector()
        for round in 0..<4 {
            let (writer, reader) = (round % 2, 1 - round % 2)
            let before = try stores[writer].vector(of: Self.document)
            for index in 0..<3 {
                _ = try stores[writer].append(
                    .edit(Edit(operations: Data("\(round).\(index)".utf8))), to: Self.document)
            }
            let changes = try stores[writer].changes(of: Self.document, since: before).map(EncodedChange.init)
            let heads = try stores[writer].signedHeads(of: Self.document, since: before)
            let already = heard.counts.withLock { $0[reader] }
            #expect(try logs[writer].ingest(changes, heads: heads).applied.count == 3)
            expected = expected.merging(try stores[writer].vector(of: Self.document))
            try await waitFor("the notification of round \(round)") { heard.counts.withLock { $0[reader] } > already }
            #expect(try logs[reader].vector(of: Self.document) == expected, "round \(round)")
            #expect(try logs[reader].catchUp()[Self.document] != nil, "round \(round)")
            // The writer's own copy holds what it wrote, and the other side's changes it read before.
            #expect(try logs[writer].vector(of: Self.document) == expected, "round \(round)")
        }
        // A side's own writes are not passed on to it: each heard only the other's two rounds (notifications reach
        // a listener in the order their writes committed, so the last round's, heard, came after all the others).
        #expect(heard.counts.withLock { $0 } == [2, 2])
        first.close()
        second.close()
    }
}

/// How many notifications of the library each side heard.
private final class Heard: Sendable {
    let counts = Mutex([0, 0])
}
