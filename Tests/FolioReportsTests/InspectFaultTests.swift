import FolioCore
import FolioDocuments
import FolioModels
import FolioReports
import FolioStore
import FolioTesting
import Foundation
import Testing

/// `folio inspect` copies the library through the file system it is given: faults reach the copy, and a failed
/// copy leaves nothing behind and the library as it was.
@Suite struct InspectFaultTests {
    let devices: TwoDevices

    init() throws {
        devices = try TwoDevices()
    }

    /// A closed library with a conflict and a saved document.
    private func library() async throws -> URL {
        let conflict = try await TextConflict(devices)
        try await conflict.iPad.close()
        try await conflict.mac.close()
        let plain = try await conflict.libraries.0.create(
            TextDocument.self, named: "Plain", contents: TextDocument(text: "saved\n"))
        try await plain.save()
        try await plain.close()
        return devices.iPad.root
    }

    /// The temporary directory the copy was made in: the first directory the inspection created.
    private func container(of recorder: FaultInjectingFileSystem) throws -> URL {
        let made = try #require(recorder.steps.first { $0.kind == .createDirectory }?.path)
        var url = URL(fileURLWithPath: made, isDirectory: true)
        while !url.lastPathComponent.hasPrefix("folio-inspect-") { url.deleteLastPathComponent() }
        return url
    }

    @Test func theStoreAndTheDocumentsAreCopiedThroughTheFileSystemAndTheCopyRemoved() async throws {
        let root = try await library()
        let recorder = FaultInjectingFileSystem()
        let report = try await ConflictReport.inspect(libraryAt: root, fileSystem: recorder)
        #expect(report.documents.count == 2)
        let copied = recorder.steps.filter { $0.kind == .copyFile }.map(\.path)
        #expect(copied.contains(root.appendingPathComponent(".folio/store.sqlite").path), "\(copied)")
        #expect(
            copied.contains { $0.hasPrefix(root.path + "/Shared/") || $0.hasPrefix(root.path + "/Documents/") },
            "\(copied)")
        #expect(try PosixFileSystem().itemKind(at: container(of: recorder)) == .absent)
    }

    @Test(arguments: ["/.folio/", "/Documents/"])
    func aCopyThatFailsIsUnreadableAndLeavesNothing(under part: String) async throws {
        let root = try await library()
        let dryRun = FaultInjectingFileSystem()
        _ = try await ConflictReport.inspect(libraryAt: root, fileSystem: dryRun)
        let step = try #require(
            dryRun.steps.firstIndex { $0.kind == .copyFile && $0.path.contains(part) }, "\(dryRun.steps)")

        let failing = FaultInjectingFileSystem(faults: [.fail(atStep: step, with: .ioError)])
        let error = await #expect(throws: ReportError.self) {
            try await ConflictReport.inspect(libraryAt: root, fileSystem: failing)
        }
        #expect(error?.code == .unreadable, "\(String(describing: error))")
        #expect(try PosixFileSystem().itemKind(at: container(of: failing)) == .absent, "the partial copy is removed")
        // The library still opens as it was: the conflict is still open.
        let report = try await ConflictReport.inspect(libraryAt: root)
        #expect(report.documents.first { $0.name == "Notes" }?.conflicts.map(\.status) == [.open])
    }
}
