import Folio
import FolioCore
import FolioModels
import FolioStore
import Foundation

/// `blob-sync`: a pages document with 10 images of 64 KiB, revised 100 times (each revision replaces one image with
/// new bytes), by a library syncing live with a real `folio serve` (the release build named by `FOLIO_BENCH_FOLIO`);
/// then a new device syncs the library. Measured: the bytes the server sent the new device (`folio_bytes_out_total`
/// before and after it joined), against the distinct image bytes of the history (110 images), and the pages the new
/// device's store uses once the document was opened and closed; the same history made
/// by a library with `blobThreshold: nil` (every image inside its change) is measured in the same run, in a library of
/// its own on the same server.
enum BlobSyncBenchmark {
    static let images = 10
    static let imageBytes = 64 * 1024
    static let revisions = 100

    static func run() async throws {
        let executable = try BenchServer.executable(for: "blob-sync")
        let scratch = try ScratchDirectory("blob-sync")
        defer { scratch.cleanUp() }
        let data = scratch.file("server")
        let blobToken = try BenchServer.token(executable: executable, library: "blobs", data: data)
        let inlineToken = try BenchServer.token(executable: executable, library: "inline", data: data)
        let server = try BenchServer(executable: executable, data: data, log: scratch.file("server.log"))
        defer { server.stop() }

        let withBlobs = try await measure(
            threshold: DocumentLibrary.defaultBlobThreshold, library: "blobs", token: blobToken, server: server,
            scratch: scratch)
        let inline = try await measure(
            threshold: nil, library: "inline", token: inlineToken, server: server, scratch: scratch)
        let distinct = (images + revisions) * imageBytes
        let ratio = Double(withBlobs.sent) / Double(distinct)
        let inlineRatio = Double(inline.sent) / Double(distinct)
        printTable(
            "blob-sync: \(images) images of \(imageBytes / 1024) KiB, \(revisions) revisions, to a new device (\(machineDescription()))",
            [
                ("distinct image bytes", "\(distinct)"),
                ("bytes sent to the new device, blobs", "\(withBlobs.sent) (\(String(format: "%.3f", ratio)) ×)"),
                ("bytes sent, images inside changes", "\(inline.sent) (\(String(format: "%.3f", inlineRatio)) ×)"),
                ("new device's store, pages in use, blobs", "\(withBlobs.storeBytes)"),
                ("new device's store, pages in use, images inside changes", "\(inline.storeBytes)"),
                ("seconds to sync the new device, blobs", String(format: "%.2f", withBlobs.seconds)),
                ("images match", "\(withBlobs.imagesMatch && inline.imagesMatch)"),
            ])
        printJSON([
            "benchmark": "blob-sync", "distinct_image_bytes": distinct, "bytes_sent": withBlobs.sent,
            "bytes_sent_ratio": ratio, "inline_bytes_sent": inline.sent, "inline_bytes_sent_ratio": inlineRatio,
            "store_bytes": withBlobs.storeBytes, "inline_store_bytes": inline.storeBytes,
            "seconds": withBlobs.seconds, "images_ok": withBlobs.imagesMatch && inline.imagesMatch,
        ])
    }

    struct Outcome {
        var sent: Int
        var storeBytes: Int
        var seconds: Double
        var imagesMatch: Bool
    }

    /// Makes the history on a library with `threshold`, uploads it, then syncs a new device; what the server sent it.
    static func measure(
        threshold: Int?, library name: String, token: String, server: BenchServer, scratch: ScratchDirectory
    ) async throws -> Outcome {
        var random = SplitMix64(seed: 71)
        func image() -> Data { Data((0..<imageBytes).map { _ in UInt8(truncatingIfNeeded: random.next()) }) }
        let url = server.libraryURL(name)
        let author = try DocumentLibrary(
            at: scratch.file("\(name)-author"), deviceName: "author", blobThreshold: threshold)
        var contents: [String: Data] = [:]
        for index in 0..<images { contents["image-\(index).png"] = image() }
        let document = try await author.create(
            PagesDocument.self, named: "Album", in: .shared,
            contents: try PagesDocument(text: "Ten pictures.\n", images: contents))
        for revision in 0..<revisions {
            try await document.edit(.putImage(name: "image-\(revision * 3 % images).png", bytes: image()))
            try await document.commit()
        }
        let final = await document.model
        try await document.close()
        let vector = try author.store.vector(of: document.id)
        let counted = try await server.metrics()
        let changesBefore = Int(counted["folio_changes_in_total"] ?? 0)
        let blobsBefore = Int(counted["folio_blobs_in_total"] ?? 0)
        let upload = try await author.startSyncing(with: url, token: token)
        try await waitUntil("the server holds the history of \(name)") {
            let metrics = try await server.metrics()
            let changes = Int(metrics["folio_changes_in_total"] ?? 0) - changesBefore
            let blobs = Int(metrics["folio_blobs_in_total"] ?? 0) - blobsBefore
            return changes >= Int(vector.changeCount) && (threshold == nil || blobs >= images + revisions)
        }
        await upload.stop()

        let before = Int(try await server.metrics()["folio_bytes_out_total"] ?? 0)
        let joiner = try DocumentLibrary(
            at: scratch.file("\(name)-joiner"), deviceName: "joiner", blobThreshold: threshold)
        let start = ContinuousClock.now
        let join = try await joiner.startSyncing(with: url, token: token)
        try await waitUntil("the new device holds the history of \(name)") {
            let held = try joiner.store.vector(of: document.id)
            let missing = try joiner.store.missingBlobs()
            return vector.isContained(in: held) && missing.isEmpty
        }
        let elapsed = ContinuousClock.now - start
        await join.stop()
        let after = Int(try await server.metrics()["folio_bytes_out_total"] ?? 0)
        let opened = try await joiner.open(document.id, as: PagesDocument.self)
        let matches = await opened.model == final
        try await opened.close()
        let storeBytes = try RawSQLite(
            scratch.file("\(name)-joiner").appendingPathComponent(".folio/store.sqlite"), synchronous: "NORMAL"
        ).usedBytes()
        return Outcome(
            sent: after - before, storeBytes: storeBytes,
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
            imagesMatch: matches)
    }

    private static func waitUntil(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(300)
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw BenchError("blob-sync: timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
