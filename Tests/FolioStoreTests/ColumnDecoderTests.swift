import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Values read back from a store file are as untrusted as bytes from a peer: anything may have written the file. A
/// hash of the wrong length, a negative number or a huge declared length is a `corrupt` store (or a problem `verify`
/// names), never a trap and never a huge allocation.
@Suite(.workPool) struct ColumnDecoderTests {
    let directory: TemporaryDirectory
    let device = Device.named("A")
    let document = Fixtures.document

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Makes a store with four changes, closes it and returns its URL and the changes.
    private func closedStore() throws -> (URL, [Change]) {
        let store = try directory.openStore(for: device)
        let changes = try store.append((1...4).map { Fixtures.edit("edit number \($0)") }, to: document)
        try store.close()
        return (store.url, changes)
    }

    private func plant(_ sql: String, on url: URL) throws {
        let outcome = try SQLiteShell.run(sql, on: url)
        try #require(outcome.succeeded, "\(outcome.errors)")
    }

    private var deviceRow: String {
        "(SELECT id FROM device WHERE uuid = \(SQLiteShell.blobLiteral(device.id.uuid.bytes)))"
    }

    @Test(arguments: ["seq", "lamport"], [StoreAccess.shared, .exclusive])
    func aNegativeNumberInTheFrontierIsCorrupt(column: String, access: StoreAccess) throws {
        let (url, _) = try closedStore()
        try plant("UPDATE frontier SET \(column) = -1 WHERE device = \(deviceRow);", on: url)
        let error = #expect(throws: StoreError.self) {
            let store = try directory.openStore(for: device, access: access, checked: false)
            _ = try store.vector(of: document)
        }
        #expect(error?.code == .corrupt, "\(String(describing: error))")
    }

    /// A parent that is not a device's latest change is looked up by hash; a row found there with a hash of the
    /// wrong length, or a negative sequence number, is a corrupt store.
    @Test(arguments: [
        (hash: "X'0102'", seq: 0),
        (hash: "", seq: -1),
    ])
    func aDamagedRowFoundByHashIsCorrupt(hash: String, seq: Int) throws {
        let (url, changes) = try closedStore()
        let parent = changes[0]
        let hashLiteral = hash.isEmpty ? SQLiteShell.blobLiteral(parent.hash.bytes) : hash
        // Sorted before the real row of the same hash key, so the lookup meets it first.
        try plant(
            """
            INSERT INTO change (document, device, seq, lamport, kind, hash_key, hash, body)
            SELECT document, device, \(seq), 1, 0, hash_key, \(hashLiteral), body FROM change
            WHERE \(SQLiteShell.rowCondition(parent));
            """, on: url)

        // Another device's change made on the first change (not on the latest), which the store checks against
        // its parents when it arrives.
        let peer = try directory.openStore(for: Device.named("B"))
        try peer.ingest(trusting: changes)
        let late = try peer.append(Fixtures.edit("on the first"), to: document, on: .heads([parent.hash]))
        #expect(late.parents == [parent.hash])

        // Either the lookup meets the damaged row and says the store is corrupt, or it reads the change from the
        // row's bytes, which are sound; never a trap. Verify names the damage either way.
        let store = try directory.openStore(for: device, checked: false)
        do {
            try store.ingest(trusting: [late])
        } catch {
            #expect(error.code == .corrupt, "\(error)")
        }
        #expect(try !store.verify().isSound)
    }

    @Test func aNegativeLamportColumnIsAProblemVerifyNames() throws {
        let (url, changes) = try closedStore()
        try plant(
            """
            DROP TRIGGER change_is_append_only_on_update;
            UPDATE change SET lamport = -3 WHERE \(SQLiteShell.rowCondition(changes[1]));
            """, on: url)
        let store = try directory.openStore(for: device, checked: false)
        let report = try store.verify()
        #expect(!report.isSound)
        #expect(report.problems.contains { $0.change == changes[1].id && $0.message.contains("lamport") }, "\(report)")
    }

    /// A deflated value declares its length before its zlib stream; a length the stream cannot hold (deflate
    /// expands at most 1032 times) is refused before anything is allocated for it.
    @Test(arguments: [UInt64(1) << 30, UInt64(1) << 29, UInt64(100_000), 0])
    func aDeclaredLengthTheDataCannotHoldIsRefused(declared: UInt64) throws {
        let store = try directory.openStore(for: device)
        let hash = try store.checkpoints.putBlob(Data("a snapshot".utf8))
        try store.close()
        var header = BinaryWriter()
        header.write(byte: 0xC0)
        header.write(varint: declared)
        // A real zlib stream of 13 bytes (of "a snapshot"), far too short for what the header declares.
        let stream: [UInt8] = [0x78, 0x01, 0x4B, 0x54, 0x28, 0xCE, 0x4B, 0x2C, 0x28, 0xCE, 0xC8, 0x2F, 0x01, 0x00]
        try plant("UPDATE blob SET bytes = \(SQLiteShell.blobLiteral(header.bytes + stream));", on: store.url)

        let reopened = try directory.openStore(for: device, checked: false)
        let error = #expect(throws: StoreError.self) { _ = try reopened.checkpoints.blob(hash) }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains("declares \(declared) bytes") == true, "\(String(describing: error))")
    }

    @Test func aLargeValueThatCompressesWellStillReadsBack() throws {
        let store = try directory.openStore(for: device)
        let zeros = Data(count: 8 << 20)
        let hash = try store.checkpoints.putBlob(zeros)
        try store.close()
        let reopened = try directory.openStore(for: device, checked: false)
        #expect(try reopened.checkpoints.blob(hash) == zeros)
    }
}
