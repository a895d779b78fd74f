import FolioCore
import FolioDocuments
import FolioModels
import FolioTestDoubles
import Foundation

/// `package-save`: a pages document (a file package) with 100 images; one image changes, then it is saved. The
/// file system is wrapped to count every byte written.
enum PackageSaveBenchmark {
    static let imageCount = 100
    static let imageBytes = 64 * 1024
    static let revisions = 10

    static func run() async throws {
        let scratch = try ScratchDirectory("package-save")
        defer { scratch.cleanUp() }
        let counting = FaultInjectingFileSystem()
        let library = try DocumentLibrary(
            at: scratch.url, key: DeviceKey(using: SeededIdentifierSource(seed: 41)), deviceName: "bench",
            clock: ManualClock(start: Timestamp(millisecondsSince1970: 1_767_225_600_000)),
            identifiers: SeededIdentifierSource(seed: 42), fileSystem: counting)
        var random = SplitMix64(seed: 43)
        func image() -> Data { Data((0..<imageBytes).map { _ in UInt8(truncatingIfNeeded: random.next()) }) }
        var images: [String: Data] = [:]
        for index in 0..<imageCount { images["image-\(index).png"] = image() }
        let document = try await library.create(
            PagesDocument.self, named: "Album",
            contents: try PagesDocument(text: "One hundred pictures.\n", images: images))
        try await document.save()
        let url = try await document.fileURL
        let changed = image()
        try await document.edit(.putImage(name: "image-42.png", bytes: changed))
        counting.resetRecord()
        var report: SaveReport?
        let seconds = try await measureAsync { report = try await document.save() }
        let written = counting.bytesWritten
        let manifest = (try? counting.attributes(at: url.appendingPathComponent(".folio-manifest")).size) ?? 0
        let packageBytes = directoryBytes(url)
        // Revisions: one image changed and saved, then the document closed (a checkpoint) and opened again, as an
        // app does across sessions; the store's pages in use grow by what each revision keeps.
        let storeURL = scratch.url.appendingPathComponent(".folio/store.sqlite")
        try await document.close()
        let start = try RawSQLite(storeURL, synchronous: "NORMAL").usedBytes()
        var used: [Int] = []
        for round in 0..<2 {
            for revision in 0..<revisions {
                let reopened = try await library.open(document.id, as: PagesDocument.self)
                let name = "image-\((round * revisions + revision) * 7 % imageCount).png"
                try await reopened.edit(.putImage(name: name, bytes: image()))
                try await reopened.save()
                try await reopened.close()
            }
            used.append(try RawSQLite(storeURL, synchronous: "NORMAL").usedBytes())
        }
        // The first revisions also fill the checkpoints a store keeps (the newest two stay whatever their
        // distance); the next ones cost what every further revision costs.
        let firstRevisions = Double(used[0] - start) / Double(revisions)
        let perRevision = Double(used[1] - used[0]) / Double(revisions)
        let goal = changed.count + manifest
        printTable(
            "package-save: \(imageCount) images of \(imageBytes) bytes, one changed, then saved (\(machineDescription()))",
            [
                ("bytes written", "\(written)"),
                ("changed image + manifest bytes", "\(changed.count) + \(manifest) = \(goal)"),
                ("within the goal", "\(written <= goal)"),
                ("files written / removed", "\(report?.filesWritten ?? 0) / \(report?.filesRemoved ?? 0)"),
                ("package bytes", "\(packageBytes)"),
                (
                    "store growth a revision, first \(revisions) (one image changed, saved, closed)",
                    "\(Int(firstRevisions)) (\(format(firstRevisions / Double(imageBytes), 2)) x the image)"
                ),
                (
                    "store growth a revision, next \(revisions)",
                    "\(Int(perRevision)) (\(format(perRevision / Double(imageBytes), 2)) x the image)"
                ),
                ("save ms", format(seconds * 1000, 2)),
            ])
        printJSON([
            "bytes_written": written, "package_bytes": packageBytes, "changed_image_bytes": changed.count,
            "manifest_bytes": manifest, "store_bytes_per_revision": Int(perRevision),
            "store_bytes_per_first_revision": Int(firstRevisions),
            "store_bytes_per_revision_ratio": (perRevision / Double(imageBytes) * 100).rounded() / 100,
        ])
    }
}
