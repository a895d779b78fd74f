import FolioConflicts
import FolioCore
import FolioDocuments
import FolioModels
import FolioReports
import FolioStore
import Foundation
import Testing

/// `folio inspect`'s report of a library directory.
@Suite struct InspectTests {
    let devices: TwoDevices

    init() throws {
        devices = try TwoDevices()
    }

    @Test func aLibraryWithAnOpenConflictIsReportedAsItsOwnDeviceSeesIt() async throws {
        let conflict = try await TextConflict(devices)
        try await conflict.iPad.close()
        try await conflict.mac.close()
        let before = try conflict.libraries.0.store.devices.all()
        let report = try await ConflictReport.inspect(libraryAt: devices.iPad.root)
        #expect(report.kind == .library)
        #expect(report.title == "Library iPad")
        #expect(report.outcome == ConflictReport.Outcome(passed: true))
        #expect(
            report.markdown().contains("| Store | **verified** |"), "a library's outcome is its store's verification")
        #expect(report.html().contains("<p class=\"outcome passed\">Store verified</p>"))
        #expect(report.devices.map(\.name) == ["iPad", "Mac"])
        let document = try #require(report.documents.first)
        #expect(document.conflicts.map(\.status) == [.open], "inspecting settles nothing")
        #expect(document.conflicts.first?.versions.count == 2)
        #expect(document.devices.map(\.device) == ["iPad"])
        #expect(document.devices.first?.state == ["inConflict"])
        let reopened = try devices.iPad.library(ConflictPolicy())
        #expect(try reopened.store.devices.all() == before, "no device was added to the library")
        #expect(try reopened.store.heads(of: conflict.iPad.id).count == 2)
    }

    @Test func inspectingLeavesTheLibraryByteForByteAsItWas() async throws {
        let conflict = try await TextConflict(devices)
        try await conflict.iPad.close()
        try await conflict.mac.close()
        let plain = try await conflict.libraries.0.create(
            TextDocument.self, named: "Plain", contents: TextDocument(text: "saved\n"))
        try await plain.save()
        try await plain.close()
        // Another program rewrites the file while the app is closed: an opening records that, and takes a checkpoint
        // when it closes; inspecting shows it without doing it to the library.
        let names = try Self.files(in: devices.iPad.root).keys.sorted()
        let file = try #require(names.first { $0.contains("Plain") }, "\(names)")
        try Data("changed by another program\n".utf8).write(to: devices.iPad.root.appendingPathComponent(file))
        let before = try Self.files(in: devices.iPad.root)

        let report = try await ConflictReport.inspect(libraryAt: devices.iPad.root)
        #expect(try Self.files(in: devices.iPad.root) == before, "not a byte of the library changed")
        let shown = try #require(report.documents.first { $0.name == "Plain" }?.devices.first)
        #expect(shown.contents == ["changed by another program"], "the report shows what the next opening would find")
        #expect(report.documents.first { $0.name == "Notes" }?.conflicts.map(\.status) == [.open])
    }

    /// Every file under `root` (the store's files included), by path relative to `root`, with its bytes.
    static func files(in root: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = try #require(
            FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]))
        for case let url as URL in enumerator
        where try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true {
            files[String(url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1))] = try Data(
                contentsOf: url)
        }
        return files
    }

    @Test func aDirectoryWithoutAStoreIsNotALibrary() async throws {
        let empty = devices.directory.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        await #expect(throws: ReportError.self) { try await ConflictReport.inspect(libraryAt: empty) }
        #expect(
            !FileManager.default.fileExists(atPath: empty.appendingPathComponent(".folio").path), "nothing was created")
    }

    @Test func aStoreThatIsNotOneIsRefusedUntouched() async throws {
        let fake = devices.directory.appendingPathComponent("fake")
        try FileManager.default.createDirectory(
            at: fake.appendingPathComponent(".folio"), withIntermediateDirectories: true)
        let store = fake.appendingPathComponent(".folio/store.sqlite")
        try Data("not a database at all".utf8).write(to: store)
        let error = try await #require(throws: ReportError.self) { try await ConflictReport.inspect(libraryAt: fake) }
        #expect(error.code == .notALibrary)
        #expect(
            error.description.hasPrefix("\(fake.path) is not a Folio library: \(store.path) is not a SQLite database"))
        #expect(
            error.description.components(separatedBy: "not a SQLite database").count == 2, "the reason once: \(error)")
        #expect(try Data(contentsOf: store) == Data("not a database at all".utf8))
        #expect(!FileManager.default.fileExists(atPath: fake.appendingPathComponent("Documents").path))
    }
}
