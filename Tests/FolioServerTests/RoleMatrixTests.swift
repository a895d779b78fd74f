import FolioClient
import FolioCore
import FolioServer
import FolioStore
import FolioSync
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// Every role against every operation, through a real `folio serve`: reading the library, writing a change,
/// settling a conflict (a resolution change), sharing the library, and administering it. A refused operation gets its
/// own code (4405 on the WebSocket, 403 on the admin API) and leaves nothing behind.
@Suite struct RoleMatrixTests {
    /// What `device` holds of `document` on the server, read with `token`.
    static func stored(_ document: DocumentID, of device: HandDevice, port: Int, token: String) async throws -> UInt64 {
        let endpoint = try ServerEndpoint(url: URL(string: "ws://127.0.0.1:\(port)/v1/libraries/notes")!, token: token)
        let store = try ChangeLogStore(inMemoryNamed: "matrix-\(UUID())", key: DeviceKey(), deviceName: "probe")
        _ = try await WebSocketTransport(endpoint: endpoint).sync(store)
        return try store.vector(of: document)[device.key.id]
    }

    @Test(arguments: LibraryRole.allCases) func eachRoleDoesWhatItMayAndNothingMore(_ role: LibraryRole) async throws {
        let fixture = try await ServerFixture.start()
        let port = fixture.server.port
        let token = try await AdminAPITests.token(fixture, "notes", role: role).secret
        let admin = try await AdminAPITests.token(fixture, "notes", role: .admin).secret
        // Something to read: a document another device wrote.
        let other = HandDevice()
        let written = DocumentID(UUIDBytes(bytes: Array(repeating: 0xA1, count: 16)))
        let seeding = try RawWebSocket(port: port, library: "notes", token: admin)
        _ = seeding.socket.send(RawWebSocket.frame(opcode: 2, other.hello()))
        _ = seeding.socket.send(
            RawWebSocket.frame(opcode: 2, other.changes([other.change(seq: 1, of: written, lamport: 1)], of: written)))
        try await eventually("the other device's document") {
            try await Self.stored(written, of: other, port: port, token: admin) == 1
        }

        // Read: every role receives the library.
        #expect(try await Self.stored(written, of: other, port: port, token: token) == 1, "\(role) reads")

        // Write, then settle: a change of the role's own device, then a resolution change.
        let mine = HandDevice()
        let document = DocumentID(UUIDBytes(bytes: Array(repeating: 0xB2, count: 16)))
        let created = mine.change(seq: 1, of: document, lamport: 1)
        let settled = mine.change(
            seq: 2, of: document, parents: [created], lamport: 2,
            kind: .resolution(Resolution(strategy: .userChoice, chosen: [created.hash], discarded: [])))
        for (operation, change) in [("write", created), ("resolve", settled)] {
            let socket = try RawWebSocket(port: port, library: "notes", token: token)
            #expect(socket.upgraded)
            _ = socket.socket.send(RawWebSocket.frame(opcode: 2, mine.hello()))
            _ = socket.socket.send(RawWebSocket.frame(opcode: 2, mine.changes([change], of: document)))
            if role.writes {
                try await eventually("\(role)'s \(operation) stored") {
                    try await Self.stored(document, of: mine, port: port, token: admin) == change.id.seq
                }
                #expect(try await offThePool { socket.closeCode(within: .milliseconds(300)) } == nil)
            } else {
                #expect(try await offThePool { socket.closeCode(within: .seconds(10)) } == 4405, "\(role) \(operation)")
                #expect(try await Self.stored(document, of: mine, port: port, token: admin) == 0)
            }
        }

        // Share, and administer: the admin role alone.
        let share = try await fixture.request(
            "PUT", "/v1/libraries/notes/admin/shares", token: token,
            body: try AdminAPITests.json(AdminAPI.ShareRequest(subject: "carl", role: .read)))
        let offline = try await fixture.request("POST", "/v1/libraries/notes/admin/offline", token: token)
        let sessions = try await fixture.get("/v1/libraries/notes/admin/sessions", token: token)
        let shares = try AdminAPITests.decode(
            [AdminAPI.Share].self, try await fixture.get("/v1/libraries/notes/admin/shares", token: admin).body)
        let status = try AdminAPITests.decode(
            AdminAPI.Status.self, try await fixture.get("/v1/libraries/notes/admin", token: admin).body)
        if role == .admin {
            #expect([share.status, offline.status, sessions.status] == [Int](repeating: 200, count: 3))
            #expect(shares.map(\.subject) == ["carl"])
            #expect(!status.online)
        } else {
            #expect([share.status, offline.status, sessions.status] == [Int](repeating: 403, count: 3), "\(role)")
            #expect(shares.isEmpty, "\(role) shared nothing")
            #expect(status.online, "\(role) took nothing offline")
        }
    }
}
