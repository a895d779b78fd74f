import FolioCore
import FolioServer
import FolioStore
import FolioSync
import Foundation

/// Copies a library's log between a server's storage and a store file, each change checked by the receiving side.
enum LogTransfer {
    /// Where a transfer keeps the storage's copy of the log (every change, and the library's server key): a new
    /// directory only this user reads, deleted afterwards.
    struct Scratch {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("folio-transfer-\(UUID())")

        init() throws {
            do {
                try FileManager.default.createDirectory(
                    at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw CommandFailure.checkFailed("cannot create \(url.path): \(error)")
            }
        }

        func remove() { try? FileManager.default.removeItem(at: url) }
    }

    /// Throws an invalid-input failure unless `library` is a valid library name.
    static func checkName(_ library: String) throws {
        guard AccountNames.isValid(library) else {
            throw CommandFailure.invalidInput("library name \(library.debugDescription) is not valid")
        }
    }

    /// What a copy took.
    struct Copied: CustomStringConvertible {
        var changes = 0
        var documents = 0
        var blobs = 0

        var description: String {
            "\(changes) change\(changes == 1 ? "" : "s") of \(documents) document\(documents == 1 ? "" : "s"), \(blobs) blob\(blobs == 1 ? "" : "s")"
        }
    }

    /// A server's log into a store file (`export`).
    static func copy(from log: any ServerLog, into store: ChangeLogStore) throws -> Copied {
        var copied = Copied()
        let summary = try log.summary()
        for document in summary.vectors.keys.sorted() {
            let (changes, heads) = try log.changes(of: document, since: VersionVector())
            try ingest(changes, heads: heads, of: document) { try store.ingest(encoded: $0, heads: $1) }
            copied.changes += changes.count
            copied.documents += 1
        }
        try store.devices.register(summary.devices.filter { $0.id != log.device.id })
        let missing = try store.missingBlobs(limit: Int.max)
        for start in stride(from: 0, to: missing.count, by: 256) {
            let part = Array(missing[start..<min(start + 256, missing.count)])
            let found = try log.blobs(part)
            copied.blobs += try store.storeBlobs(part.compactMap { found[$0] }).stored.count
        }
        return copied
    }

    /// A store file into a server's log (`import`): the store's own changes are signed with its key. Devices' names
    /// are not taken from the file: a device names itself to the server when it proves its key there.
    static func copy(from store: ChangeLogStore, into log: any ServerLog) throws -> Copied {
        var copied = Copied()
        for entry in try store.summaries() {
            let changes = try store.changes(of: entry.document).map(EncodedChange.init)
            let heads = try store.signedHeads(of: entry.document)
            try ingest(changes, heads: heads, of: entry.document) { try log.ingest($0, heads: $1) }
            copied.changes += changes.count
            copied.documents += 1
        }
        let missing = try log.missingBlobs(limit: Int.max)
        for start in stride(from: 0, to: missing.count, by: 256) {
            let part = Array(missing[start..<min(start + 256, missing.count)])
            let found = try store.blobs(part)
            copied.blobs += try log.storeBlobs(part.compactMap { found[$0] }).stored.count
        }
        return copied
    }

    /// Ingests a document's `changes` with the heads that vouch for them, in one call (a head reaches the changes of
    /// its device below it: in parts, those below a head of a later part would wait), and checks that every one was
    /// taken.
    private static func ingest(
        _ changes: [EncodedChange], heads: [SignedHead], of document: DocumentID,
        _ take: ([EncodedChange], [SignedHead]) throws -> IngestResult
    ) throws {
        let result = try take(changes, heads)
        let taken = result.applied.count + result.duplicates
        guard taken >= changes.count else {
            let reasons = result.rejected.map(\.reason) + result.refusedHeads.map(\.reason)
            throw StoreError(
                .invalidChange,
                "document \(document): \(changes.count - taken) of \(changes.count) changes were not taken\(reasons.isEmpty ? "" : " (\(reasons.prefix(3).joined(separator: "; ")))")"
            )
        }
    }
}
