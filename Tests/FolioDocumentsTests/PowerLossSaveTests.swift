import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import Foundation
import Testing

/// Power loss at every step of a save, flat and package: first save, later save, save after another program changed
/// the file. The disk keeps only what was synced, plus a seeded subset of the rest (``PowerLossFileSystem``).
///
/// Each crash point (before each step, and after the last, once the save returned) is tried with several seeds;
/// the surviving files are opened again with the real file system, which recovers them. The saved file must be the
/// old complete version or the new complete one, never torn, and the new one once the save returned; a package must
/// recover to a committed state (its manifest matches its members) with no leftover. At the library level, the
/// document must also open with every change its log committed.
@Suite struct PowerLossSaveTests {
    /// Seeds tried at each crash point of the save pipeline, and of a library's save.
    static let pipelineSeeds: [UInt64] = Array(0..<8)
    static let librarySeeds: [UInt64] = Array(0..<3)

    // MARK: - The save pipeline

    enum PipelineScenario: String, CaseIterable, CustomTestStringConvertible {
        case flatFirstSave, flatLaterSave, packageFirstSave, packageLaterSave, packageSaveAfterExternalEdit

        var testDescription: String { rawValue }
        var isPackage: Bool { rawValue.hasPrefix("package") }
        var name: String { isPackage ? "Pages.pages" : "Notes.txt" }

        /// The version the save writes.
        func newContents() throws -> DocumentContents {
            isPackage ? .package(try Samples.newPackage()) : .data(Data(String(repeating: "the new contents ", count: 70).utf8))
        }

        /// Puts the state before the save on disk (durable, as the model takes it) and returns what it holds.
        func prepare(in directory: URL) throws -> DocumentContents? {
            let url = directory.appendingPathComponent(name)
            // The model counts what is there as durable: real fsyncs would only cost time.
            let pipeline = SavePipeline(fileSystem: PosixFileSystem(synchronizes: false))
            switch self {
            case .flatFirstSave, .packageFirstSave:
                return nil
            case .flatLaterSave:
                let old = Data(String(repeating: "the old contents ", count: 40).utf8)
                try pipeline.saveFlat(old, to: url)
                return .data(old)
            case .packageLaterSave:
                try pipeline.savePackage(try Samples.oldPackage(), to: url)
                return .package(try Samples.oldPackage())
            case .packageSaveAfterExternalEdit:
                try pipeline.savePackage(try Samples.oldPackage(), to: url)
                // Another program rewrites a member the new version also changes, resizes one it keeps, and adds one.
                try Data("# Title\n\nEdited elsewhere.\n".utf8).write(to: url.appendingPathComponent("text.md"))
                try Data(String(repeating: "B", count: 20).utf8).write(to: url.appendingPathComponent("images/b.png"))
                try Data("added elsewhere".utf8).write(to: url.appendingPathComponent("images/c.png"))
                return .package(try pipeline.readPackage(at: url, verifyingManifest: false))
            }
        }
    }

    struct SweepResult {
        var crashPoints = 0
        var runs = 0
        var violations: [String] = []
    }

    /// Sweeps every crash point of one save, on a file system made from the model by `wrapping` (the model itself,
    /// or a double that drops some of its calls, to prove the sweep catches them).
    static func sweep(
        _ scenario: PipelineScenario, seeds: [UInt64] = pipelineSeeds,
        wrapping: (PowerLossFileSystem) -> any FileSystem = { $0 }
    ) throws -> SweepResult {
        let new = try scenario.newContents()
        let dryRun = try ScratchDirectory()
        _ = try scenario.prepare(in: dryRun.url)
        let model = try PowerLossFileSystem(root: dryRun.url)
        try SavePipeline(fileSystem: wrapping(model)).save(new, to: dryRun.file(scenario.name))
        let steps = model.steps
        var result = SweepResult()
        // A cut at `steps.count` comes after the save returned.
        for cut in 0...steps.count {
            result.crashPoints += 1
            for seed in seeds {
                result.runs += 1
                let work = try ScratchDirectory()
                let old = try scenario.prepare(in: work.url)
                let disk = try PowerLossFileSystem(root: work.url, cutAt: cut)
                let returned = (try? SavePipeline(fileSystem: wrapping(disk)).save(new, to: work.file(scenario.name))) != nil
                #expect(returned == (cut == steps.count))
                let survivors = try ScratchDirectory()
                try disk.materialize(into: survivors.url, seed: seed)
                let place = cut < steps.count ? "before step \(cut) (\(steps[cut]))" : "after the save returned"
                if let problem = check(survivors.file(scenario.name), scenario, old: old, new: new, returned: returned) {
                    result.violations.append("\(scenario), power cut \(place), seed \(seed): \(problem)")
                }
            }
        }
        return result
    }

    /// What is wrong with the file at `url` after a restart, or `nil`.
    static func check(
        _ url: URL, _ scenario: PipelineScenario, old: DocumentContents?, new: DocumentContents, returned: Bool
    ) -> String? {
        let pipeline = SavePipeline(fileSystem: PosixFileSystem(synchronizes: false))
        let found: DocumentContents?
        do {
            if scenario.isPackage {
                try pipeline.recoverPackage(at: url)
            } else {
                try pipeline.recoverFlat(at: url)
            }
            // Read as another program's edit would be: the old version of the external-edit scenario is one.
            found = Disk.exists(url)
                ? (scenario.isPackage ? .package(try pipeline.readPackage(at: url, verifyingManifest: false)) : .data(try pipeline.readFlat(at: url)))
                : nil
        } catch {
            return "recovery failed: \(error)"
        }
        if returned && found != new { return "the save returned, but the file holds \(describe(found))" }
        if found != old && found != new { return "the file holds neither version but \(describe(found))" }
        if found == new && scenario.isPackage {
            // The new version is a committed one: its manifest vouches for every member.
            if (try? pipeline.readPackage(at: url)) == nil { return "the new version's manifest does not match its members" }
        }
        let leftovers = Disk.leftovers(in: url.deletingLastPathComponent()) + (scenario.isPackage ? Disk.leftovers(in: url) : [])
        if !leftovers.isEmpty { return "recovery left \(leftovers)" }
        return nil
    }

    static func describe(_ contents: DocumentContents?) -> String {
        switch contents {
        case nil: "nothing"
        case .data(let data): "\(data.count) bytes starting \(String(decoding: data.prefix(24), as: UTF8.self).debugDescription)"
        case .package(let package): "a package of \(package.filePaths.map(\.description).sorted())"
        }
    }

    @Test(arguments: PipelineScenario.allCases)
    func everyCrashPointOfASaveLeavesTheOldOrTheNewVersion(_ scenario: PipelineScenario) throws {
        let result = try Self.sweep(scenario)
        print("power loss, \(scenario): \(result.crashPoints) crash points swept, \(result.runs) runs, \(result.violations.count) violations")
        #expect(result.violations.isEmpty, "\(result.violations.prefix(5).joined(separator: "\n"))")
        #expect(result.crashPoints >= (scenario.isPackage ? 10 : 5))
    }

    /// The sweep catches a missing fsync: the same saves on a file system that drops every directory sync (or every
    /// file sync) lose or tear a saved file somewhere.
    @Test(arguments: [FaultInjectingFileSystem.Step.Kind.synchronizeDirectory, .synchronizeFile])
    func aSaveWithoutItsSyncsIsCaught(_ dropped: FaultInjectingFileSystem.Step.Kind) throws {
        for scenario in [PipelineScenario.flatLaterSave, .packageLaterSave] {
            let result = try Self.sweep(scenario) { DroppingSyncs(base: $0, dropped: dropped) }
            print("power loss without \(dropped), \(scenario): \(result.violations.count) violations in \(result.runs) runs")
            #expect(!result.violations.isEmpty, "\(scenario) without \(dropped)")
        }
    }

    // MARK: - A library's documents

    enum LibraryScenario: String, CaseIterable, CustomTestStringConvertible {
        case firstSave, laterSave, saveAfterExternalModification
        var testDescription: String { rawValue }
    }

    /// A text document saved by a library whose store is `Durability.full`, cut at every step of the save; the
    /// library reopened from the surviving files must hold the document with every change its log committed, and
    /// its file must be the old or the new complete version.
    @Test(arguments: LibraryScenario.allCases)
    func aDocumentSavedAtACrashPointReopensWithItsLog(_ scenario: LibraryScenario) async throws {
        let reference = try await LibraryRun(scenario, cutAt: nil)
        var crashPoints = 0
        for cut in 0...reference.steps {
            crashPoints += 1
            for seed in Self.librarySeeds {
                let run = try await LibraryRun(scenario, cutAt: cut)
                #expect(run.returned == (cut == reference.steps))
                let reopened = try await run.reopen(seed: seed)
                let place = cut < reference.steps ? "before step \(cut)" : "after the save returned"
                #expect(reopened.text == reference.expectedText, "\(scenario), power cut \(place), seed \(seed)")
                #expect(
                    reopened.file == run.oldFile || reopened.file == reference.newFile,
                    "\(scenario), power cut \(place), seed \(seed): the file holds \(reopened.file.map { String(decoding: $0, as: UTF8.self) } ?? "nothing")")
                if run.returned { #expect(reopened.file == reference.newFile, "\(scenario), after the save returned, seed \(seed)") }
            }
        }
        print("power loss, library \(scenario): \(crashPoints) crash points swept, \(crashPoints * Self.librarySeeds.count) runs")
    }
}

/// One save of a text document by a library on the power-loss model.
private struct LibraryRun {
    let directory: ScratchDirectory
    let id: DocumentID
    let steps: Int
    let returned: Bool
    let oldFile: Data?
    let newFile: Data?
    let disk: PowerLossFileSystem
    /// In the reference run (no cut), the text of the document reopened after the save.
    let expectedText: String?

    /// The library's directory.
    var root: URL { directory.url.appendingPathComponent("Library", isDirectory: true) }
    /// The document's file.
    var file: URL { root.appendingPathComponent("Documents/Notes.txt", isDirectory: false) }

    init(_ scenario: PowerLossSaveTests.LibraryScenario, cutAt: Int?) async throws {
        directory = try ScratchDirectory()
        let root = directory.url.appendingPathComponent("Library", isDirectory: true)
        let file = root.appendingPathComponent("Documents/Notes.txt", isDirectory: false)
        // Before the save: made, edited, and (but for a first save) saved; then perhaps rewritten by another program.
        var library: DocumentLibrary? = try Self.library(at: root, fileSystem: PosixFileSystem(synchronizes: false), durability: .off)
        var document: Document<TextDocument>? = try await library!.create(TextDocument.self, named: "Notes")
        id = document!.id
        try await document!.edit(.append("first line\n"))
        if scenario != .firstSave { try await document!.save() }
        try await document!.close()
        document = nil
        library = nil
        if scenario == .saveAfterExternalModification {
            try Data("rewritten by another program\n".utf8).write(to: file)
        }
        oldFile = try? Data(contentsOf: file)

        // The save, on the model; the store's files are outside it (a `.full` store's commits are durable).
        disk = try PowerLossFileSystem(root: root, ignoring: [".folio"], cutAt: cutAt)
        var returned = false
        do {
            library = try Self.library(at: root, fileSystem: disk)
            document = try await library!.open(id, as: TextDocument.self)
            try await document!.edit(.append("second line\n"))
            try await document!.save()
            returned = true
        } catch where disk.isCut {
        }
        self.returned = returned
        steps = disk.steps.count - (disk.isCut ? 1 : 0)
        document = nil
        library = nil
        newFile = returned ? try? Data(contentsOf: file) : nil
        expectedText = cutAt == nil ? try await Self.reopen(root, id: id) : nil
    }

    /// The library as it reopens after the power cut: the surviving files, the store's files as committed.
    func reopen(seed: UInt64) async throws -> (text: String, file: Data?) {
        let survivors = try ScratchDirectory()
        try disk.materialize(into: survivors.url, seed: seed)
        try FileManager.default.copyItem(at: root.appendingPathComponent(".folio"), to: survivors.file(".folio"))
        let text = try await Self.reopen(survivors.url, id: id)
        return (text, try? Data(contentsOf: survivors.file("Documents/Notes.txt")))
    }

    /// The text of the document in the library at `root`, opened with the real file system (which recovers it).
    static func reopen(_ root: URL, id: DocumentID) async throws -> String {
        let library = try library(at: root, fileSystem: PosixFileSystem(synchronizes: false), durability: .off)
        let document = try await library.open(id, as: TextDocument.self)
        let text = await document.model.text
        try await document.close()
        return text
    }

    /// The library at `root`, with the same device, clock and identities in every run. During the save its store
    /// is synced at every commit, which lets the model take the store's files as they are at the cut; before and
    /// after, nothing needs real fsyncs.
    static func library(at root: URL, fileSystem: any FileSystem, durability: Durability = .full) throws -> DocumentLibrary {
        try DocumentLibrary(
            at: root, device: Device(id: DeviceID(using: SeededIdentifierSource(seed: 0xD0C4)), name: "Test Device"),
            types: DocumentTypeRegistry([TextDocument.documentType]), clock: ManualClock(start: LibraryFixture.start),
            identifiers: SeededIdentifierSource(seed: 1), fileSystem: fileSystem, durability: durability,
            autosave: .manual, backgroundWork: false)
    }
}

/// A file system that drops one kind of sync (the call returns, nothing is synced): a save pipeline that forgot it.
private struct DroppingSyncs: FileSystem {
    let base: PowerLossFileSystem
    let dropped: FaultInjectingFileSystem.Step.Kind

    func itemKind(at url: URL) throws(FileSystemError) -> FileItemKind { try base.itemKind(at: url) }
    func attributes(at url: URL) throws(FileSystemError) -> FileAttributes { try base.attributes(at: url) }
    func contents(of url: URL) throws(FileSystemError) -> Data { try base.contents(of: url) }
    func contentsOfDirectory(at url: URL) throws(FileSystemError) -> [String] { try base.contentsOfDirectory(at: url) }
    func createDirectory(at url: URL) throws(FileSystemError) { try base.createDirectory(at: url) }
    func writeFile(_ data: Data, to url: URL) throws(FileSystemError) { try base.writeFile(data, to: url) }
    func rename(_ source: URL, to destination: URL) throws(FileSystemError) { try base.rename(source, to: destination) }
    func remove(at url: URL) throws(FileSystemError) { try base.remove(at: url) }

    func synchronizeFile(at url: URL) throws(FileSystemError) {
        if dropped != .synchronizeFile { try base.synchronizeFile(at: url) }
    }

    func synchronizeDirectory(at url: URL) throws(FileSystemError) {
        if dropped != .synchronizeDirectory { try base.synchronizeDirectory(at: url) }
    }
}
