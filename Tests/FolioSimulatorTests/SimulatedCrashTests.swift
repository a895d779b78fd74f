import FolioConflicts
import FolioCore
import FolioDocuments
import FolioFiles
import FolioModels
import FolioTestDoubles
import Foundation
import Testing

@testable import FolioSimulator

/// A simulated crash is a dead process: nothing it held in memory may keep its store or write to its disk once the
/// device is killed, however late the work that still referred to them runs.
@Suite struct SimulatedCrashTests {
    /// A document of the dead process still referred to (as a job still queued when the process died refers to it)
    /// keeps the library, and with it the store, alive. The restart must open the store all the same (a killed
    /// process's locks go with it), and the dead document must neither write to the log nor to the disk.
    @Test func aRestartOpensTheStoreThatWorkOfTheDeadProcessStillHolds() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("folio-crash-\(UUID())")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let device = SimulatedDevice(
            name: "iPad", key: DeviceKey(using: SeededIdentifierSource(seed: 1)),
            root: root.appendingPathComponent("device-1"),
            clock: ManualClock(start: Timestamp(millisecondsSince1970: 1_767_225_600_000)), skew: 0,
            identifierSeed: 2, policy: ConflictPolicy(default: .merge),
            fileSystem: PosixFileSystem(synchronizes: false))
        try await device.start()
        let document = try await device.runningLibrary().create(TextDocument.self, named: "Notes", in: .shared)
        try await document.edit(.insert(at: 0, text: "kept"))
        try await document.commit()

        let deadFileSystem = device.fileSystem
        device.kill()
        #expect(deadFileSystem.hasCrashed)
        try await device.start()

        // The dead process's document writes nothing more, neither a change nor its file.
        // (The device commits every edit at once: the edit's append fails.)
        await #expect(throws: DocumentError.self) { try await document.edit(.insert(at: 4, text: " lost")) }
        let refusedSave = await #expect(throws: DocumentError.self) { try await document.save() }
        #expect("\(String(describing: refusedSave))".contains("killed"), "\(String(describing: refusedSave))")
        // Whatever of it would write a file without the store fails too.
        let stray = root.appendingPathComponent("device-1/Shared/stray.text")
        #expect(throws: FileSystemError.self) { try deadFileSystem.writeFile(Data("late".utf8), to: stray) }
        #expect(!FileManager.default.fileExists(atPath: stray.path))
        let library = try device.runningLibrary()
        let reopened = try await library.open(document.id, as: TextDocument.self)
        #expect(await reopened.model.text == "kept")
        let file = root.appendingPathComponent("device-1/Shared/Notes.text")
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }
}
