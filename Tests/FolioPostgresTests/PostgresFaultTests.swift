import Folio
import FolioClient
import FolioPostgres
import FolioTesting
import FolioToolRunner
import Foundation
import Synchronization
import Testing

/// A server process killed while devices sync through two processes over one database.
@Suite(.serialized) struct PostgresFaultTests {
    static let devices = 20
    static let rounds = 6

    @Test func killingOneOfTwoProcessesLosesNothingAcknowledgedAndDevicesConvergeThroughTheOther() async throws {
        let test = try await TestPostgres.fresh()
        let directory = try TemporaryDirectory()
        let servers = try await test.servers(["first", "second"], in: directory)
        let (first, second) = (servers[0], servers[1])
        let token = try await first.token(for: "notes")
        @Sendable func transport(_ server: ServerProcess) throws -> WebSocketTransport {
            WebSocketTransport(endpoint: try ServerEndpoint(url: server.libraryURL("notes"), token: token))
        }
        let libraries = try (0..<Self.devices).map { index in
            try DocumentLibrary(
                at: try directory.subdirectory("device\(index)"), deviceName: "device\(index)",
                conflictPolicy: ConflictPolicy(default: .merge))
        }
        // The note, known to every device before they write.
        let note = try await libraries[0].create(TextDocument.self, named: "Log", in: .shared)
        try await note.edit([.append("start\n")])
        try await note.commit()
        _ = try await libraries[0].sync(through: transport(first))
        for library in libraries.dropFirst() { _ = try await library.sync(through: transport(second)) }

        // Each device appends a line a round and syncs through its process (even ones the first, odd ones the
        // second); the first is killed with SIGKILL after the second round. A line is acknowledged once a sync that
        // carried it returned.
        let tally = Tally()
        let noteID = note.id
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, library) in libraries.enumerated() {
                group.addTask {
                    let document = try await library.open(noteID, as: TextDocument.self)
                    var pending: [String] = []
                    for round in 0..<Self.rounds {
                        let line = "device\(index) round\(round)"
                        try await document.edit([.append(line + "\n")])
                        try await document.commit()
                        pending.append(line)
                        let server = index.isMultiple(of: 2) && !tally.killed.withLock({ $0 }) ? first : second
                        do {
                            _ = try await library.sync(through: transport(server))
                            tally.acknowledged.withLock { $0.formUnion(pending) }
                            pending = []
                        } catch {
                            // The first process is gone: this device goes on through the second.
                        }
                        if index == 0, round == 1 {
                            first.send(SIGKILL)
                            tally.killed.withLock { $0 = true }
                        }
                    }
                    try await document.close()
                }
            }
            try await group.waitForAll()
        }
        // What PostgreSQL holds before any device syncs again: a new device takes it through the second.
        let witness = try DocumentLibrary(
            at: try directory.subdirectory("witness"), deviceName: "witness",
            conflictPolicy: ConflictPolicy(default: .merge))
        _ = try await witness.sync(through: transport(second))
        let held = try await witness.open(note.id, as: TextDocument.self)
        let stored = Set(await held.model.text.split(separator: "\n").map(String.init))
        try await held.close()
        let lost = tally.acknowledged.withLock { $0 }.subtracting(stored)
        #expect(lost.isEmpty, "acknowledged lines the database lacks: \(lost.sorted())")
        // Everyone syncs through the second until nothing moves.
        for _ in 0..<2 {
            for library in libraries { _ = try await library.sync(through: transport(second)) }
        }
        var texts: [String] = []
        for library in libraries {
            let document = try await library.open(note.id, as: TextDocument.self)
            texts.append(await document.model.text)
            try await document.close()
        }
        #expect(Set(texts).count == 1, "every device shows the same text")
        let lines = Set(texts[0].split(separator: "\n").map(String.init))
        #expect(lines.count == Self.devices * Self.rounds + 1, "every line typed, once")
        #expect(
            tally.acknowledged.withLock { $0 }.contains { $0.hasPrefix("device0 ") },
            "lines were acknowledged through the first process before it was killed")
        await second.stop()
    }
}

/// What the devices of the test were told was stored, and whether the first process was killed.
private final class Tally: Sendable {
    let acknowledged = Mutex<Set<String>>([])
    let killed = Mutex(false)
}
