import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioTestWorkPool
import FolioTesting
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
@Suite(.workPool) struct PowerLossSaveTests {
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
            isPackage
                ? .package(try Samples.newPackage())
                : .data(Data(String(repeating: "the new contents ", count: 70).utf8))
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
        let dryRun = try TemporaryDirectory(inMemory: true)
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
                let work = try TemporaryDirectory(inMemory: true)
                let old = try scenario.prepare(in: work.url)
                let disk = try PowerLossFileSystem(root: work.url, cutAt: cut)
                let returned =
                    (try? SavePipeline(fileSystem: wrapping(disk)).save(new, to: work.file(scenario.name))) != nil
                #expect(returned == (cut == steps.count))
                let survivors = try TemporaryDirectory(inMemory: true)
                try disk.materialize(into: survivors.url, seed: seed)
                let place = cut < steps.count ? "before step \(cut) (\(steps[cut]))" : "after the save returned"
                if let problem = check(survivors.file(scenario.name), scenario, old: old, new: new, returned: returned)
                {
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
            found =
                Disk.exists(url)
                ? (scenario.isPackage
                    ? .package(try pipeline.readPackage(at: url, verifyingManifest: false))
                    : .data(try pipeline.readFlat(at: url)))
                : nil
        } catch {
            return "recovery failed: \(error)"
        }
        if returned && found != new { return "the save returned, but the file holds \(describe(found))" }
        if found != old && found != new { return "the file holds neither version but \(describe(found))" }
        if found == new && scenario.isPackage {
            // The new version is a committed one: its manifest vouches for every member.
            if (try? pipeline.readPackage(at: url)) == nil {
                return "the new version's manifest does not match its members"
            }
        }
        let leftovers =
            Disk.leftovers(in: url.deletingLastPathComponent()) + (scenario.isPackage ? Disk.leftovers(in: url) : [])
        if !leftovers.isEmpty { return "recovery left \(leftovers)" }
        return nil
    }

    static func describe(_ contents: DocumentContents?) -> String {
        switch contents {
        case nil: "nothing"
        case .data(let data):
            "\(data.count) bytes starting \(String(decoding: data.prefix(24), as: UTF8.self).debugDescription)"
        case .package(let package): "a package of \(package.filePaths.map(\.description).sorted())"
        }
    }

    @Test(arguments: PipelineScenario.allCases)
    func everyCrashPointOfASaveLeavesTheOldOrTheNewVersion(_ scenario: PipelineScenario) throws {
        let result = try Self.sweep(scenario)
        print(
            "power loss, \(scenario): \(result.crashPoints) crash points swept, \(result.runs) runs, \(result.violations.count) violations"
        )
        #expect(result.violations.isEmpty, "\(result.violations.prefix(5).joined(separator: "\n"))")
        #expect(result.crashPoints >= (scenario.isPackage ? 10 : 5))
    }

    /// A second power cut, at any step of the recovery after the first (two seeds each), still leaves the old or the
    /// new complete version once the package recovers: recovery's own moves and removals are synced in an order that
    /// a cut can interrupt.
    @Test(arguments: [PipelineScenario.packageLaterSave, .packageSaveAfterExternalEdit])
    func aRecoveryCutByASecondPowerLossStillRecovers(_ scenario: PipelineScenario) throws {
        let new = try scenario.newContents()
        let dryRun = try TemporaryDirectory(inMemory: true)
        _ = try scenario.prepare(in: dryRun.url)
        let model = try PowerLossFileSystem(root: dryRun.url)
        try SavePipeline(fileSystem: model).save(new, to: dryRun.file(scenario.name))
        var runs = 0
        var violations: [String] = []
        for cut in 0..<model.steps.count {
            for seed: UInt64 in [0, 1] {
                let work = try TemporaryDirectory(inMemory: true)
                let old = try scenario.prepare(in: work.url)
                let disk = try PowerLossFileSystem(root: work.url, cutAt: cut)
                _ = try? SavePipeline(fileSystem: disk).save(new, to: work.file(scenario.name))
                let restarted = try TemporaryDirectory(inMemory: true)
                try disk.materialize(into: restarted.url, seed: seed)
                // The recovery's steps, then a cut at each.
                let recoveryDryRun = try TemporaryDirectory(inMemory: true)
                try FileManager.default.removeItem(at: recoveryDryRun.url)
                try FileManager.default.copyItem(at: restarted.url, to: recoveryDryRun.url)
                let recoveryModel = try PowerLossFileSystem(root: recoveryDryRun.url)
                do {
                    try SavePipeline(fileSystem: recoveryModel).recoverPackage(at: recoveryDryRun.file(scenario.name))
                } catch {
                    violations.append(
                        "\(scenario), power cut before save step \(cut), seed \(seed): recovery failed: \(error)")
                    continue
                }
                for recoveryCut in 0..<recoveryModel.steps.count {
                    runs += 1
                    let again = try TemporaryDirectory(inMemory: true)
                    try FileManager.default.removeItem(at: again.url)
                    try FileManager.default.copyItem(at: restarted.url, to: again.url)
                    let secondDisk = try PowerLossFileSystem(root: again.url, cutAt: recoveryCut)
                    #expect(throws: SaveError.self) {
                        try SavePipeline(fileSystem: secondDisk).recoverPackage(at: again.file(scenario.name))
                    }
                    let survivors = try TemporaryDirectory(inMemory: true)
                    try secondDisk.materialize(into: survivors.url, seed: seed &+ 100)
                    if let problem = Self.check(
                        survivors.file(scenario.name), scenario, old: old, new: new, returned: false)
                    {
                        violations.append(
                            "\(scenario), power cut before save step \(cut), then before recovery step \(recoveryCut) (\(recoveryModel.steps[recoveryCut])), seed \(seed): \(problem)"
                        )
                    }
                }
            }
        }
        // Each run is a crash point of its own: a cut in the save and a seed make the disk that recovery starts from.
        print(
            "power loss during recovery, \(scenario): \(runs) crash points swept (a cut in the save, then one in its recovery), \(violations.count) violations"
        )
        #expect(violations.isEmpty, "\(violations.prefix(5).joined(separator: "\n"))")
        #expect(runs > 0)
    }

    /// The sweep catches a missing fsync: the same saves on a file system that drops every directory sync (or every
    /// file sync) lose or tear a saved file somewhere.
    @Test(arguments: [FaultInjectingFileSystem.Step.Kind.synchronizeDirectory, .synchronizeFile])
    func aSaveWithoutItsSyncsIsCaught(_ dropped: FaultInjectingFileSystem.Step.Kind) throws {
        for scenario in [PipelineScenario.flatLaterSave, .packageLaterSave] {
            let result = try Self.sweep(scenario) { DroppingSyncs(base: $0, dropped: dropped) }
            print(
                "power loss without \(dropped), \(scenario): \(result.violations.count) violations in \(result.runs) runs"
            )
            #expect(!result.violations.isEmpty, "\(scenario) without \(dropped)")
        }
    }

    // MARK: - A library's documents

    enum LibraryScenario: String, CaseIterable, CustomTestStringConvertible {
        /// A library made where there was none: its directories and store, a document created, edited and saved.
        case newLibrary
        /// An existing library's document, not saved yet / saved / saved and then rewritten by another program:
        /// reopened, edited and saved.
        case firstSave, laterSave, saveAfterExternalModification
        var testDescription: String { rawValue }
    }

    /// A text document reopened (in a new library, created), edited and saved by a library whose store is
    /// `Durability.full`, cut at every step of the file I/O and at every sync and deletion of the store's files (the
    /// library's opening, the edit's commit, the save's records, the store's closing), the two on one power supply.
    /// The library reopened from the surviving files must show the document as it was before the edit or after it
    /// (after it once the edit returned; missing only while its creation had not returned), with a sound log, and
    /// its file must be the old or the new complete version (the new once the save returned).
    @Test(arguments: LibraryScenario.allCases)
    func aDocumentSavedAtACrashPointReopensWithItsLog(_ scenario: LibraryScenario) async throws {
        let result = try await Self.sweep(scenario, durability: .full)
        print(
            "power loss, library \(scenario): \(result.crashPoints) crash points swept (\(result.fileCrashPoints) in the "
                + "files, \(result.crashPoints - result.fileCrashPoints) at the store's syncs and deletions), \(result.runs) runs, "
                + "\(result.editsInFlight) with the edit in flight, \(result.violations.count) violations")
        #expect(result.violations.isEmpty, "\(result.violations.prefix(5).joined(separator: "\n"))")
        #expect(result.editsInFlight > 0 && result.crashPoints > result.fileCrashPoints)
    }

    /// The sweep catches a store that does not sync: a library whose store is `.off` loses an edit that returned.
    @Test func aLibraryWhoseStoreDoesNotSyncIsCaught() async throws {
        let result = try await Self.sweep(.laterSave, durability: .off)
        print(
            "power loss, library laterSave with a store that never syncs: \(result.violations.count) violations in \(result.runs) runs"
        )
        #expect(!result.violations.isEmpty)
    }

    struct LibrarySweepResult {
        var crashPoints = 0
        var fileCrashPoints = 0
        var runs = 0
        /// Runs cut before the edit returned.
        var editsInFlight = 0
        var violations: [String] = []
    }

    static func sweep(_ scenario: LibraryScenario, durability: Durability) async throws -> LibrarySweepResult {
        let reference = try await LibraryRun(scenario, cut: nil, seed: 0, durability: durability)
        let points =
            (0...reference.fileSteps).map(LibraryRun.Cut.fileStep)
            + reference.storeEvents.enumerated().filter { $0.element != .write }.map {
                LibraryRun.Cut.storeEvent($0.offset)
            }
        var result = LibrarySweepResult(crashPoints: points.count, fileCrashPoints: reference.fileSteps + 1)
        for cut in points {
            for seed in librarySeeds {
                let run = try await LibraryRun(scenario, cut: cut, seed: seed, durability: durability)
                result.runs += 1
                if !run.editReturned { result.editsInFlight += 1 }
                let place = "\(scenario), power cut \(cut.describe(fileSteps: reference.fileSteps)), seed \(seed)"
                guard run.wasCut || cut == .fileStep(reference.fileSteps) else {
                    result.violations.append("\(place): the cut never came")
                    continue
                }
                let reopened: (text: String?, isSound: Bool, file: Data?)
                do {
                    reopened = try await run.reopen(id: reference.id)
                } catch {
                    result.violations.append("\(place): the library does not reopen: \(error)")
                    continue
                }
                // Before the document's creation returned, it may be missing.
                var allowed: [String?] =
                    run.editReturned ? [reference.textAfterEdit] : [reference.textBeforeEdit, reference.textAfterEdit]
                if !run.documentReturned { allowed.append(nil) }
                if !reopened.isSound { result.violations.append("\(place): the log is unsound") }
                if !allowed.contains(reopened.text) {
                    result.violations.append(
                        "\(place): the document \(reopened.text.map { "shows \($0.debugDescription)" } ?? "is missing")"
                    )
                }
                if reopened.file != run.oldFile && reopened.file != reference.newFile
                    || run.saveReturned && reopened.file != reference.newFile
                {
                    let found = reopened.file.map { String(decoding: $0, as: UTF8.self) }
                    result.violations.append(
                        "\(place): the file holds \(found.debugDescription)\(run.saveReturned ? " though the save returned" : "")"
                    )
                }
            }
        }
        return result
    }
}

/// One reopening, edit and save of a text document by a library whose files and store share a power supply.
private struct LibraryRun {
    /// Where the power is cut: before a step of the file system (`fileSteps`: after the save returned), or at an
    /// I/O event of the store's files.
    enum Cut: Equatable {
        case fileStep(Int)
        case storeEvent(Int)

        func describe(fileSteps: Int) -> String {
            switch self {
            case .fileStep(let step): step < fileSteps ? "before file step \(step)" : "after the save returned"
            case .storeEvent(let event): "at the store's I/O event \(event)"
            }
        }
    }

    let directory: TemporaryDirectory
    let seed: UInt64
    let id: DocumentID?
    let fileSteps: Int
    let storeEvents: [PowerLossStore.Event]
    let wasCut: Bool
    /// Whether the document was created or opened before the cut.
    let documentReturned: Bool
    let editReturned: Bool
    let saveReturned: Bool
    let oldFile: Data?
    let newFile: Data?
    let files: PowerLossFileSystem
    let store: PowerLossStore
    /// The text the document showed when reopened, and after the edit (read in the reference run).
    let textBeforeEdit: String
    let textAfterEdit: String

    /// The library's directory.
    var root: URL { directory.url.appendingPathComponent("Library", isDirectory: true) }

    init(_ scenario: PowerLossSaveTests.LibraryScenario, cut: Cut?, seed: UInt64, durability: Durability) async throws {
        directory = try TemporaryDirectory(inMemory: true)
        self.seed = seed
        let root = directory.url.appendingPathComponent("Library", isDirectory: true)
        let file = root.appendingPathComponent("Documents/Notes.txt", isDirectory: false)
        var library: DocumentLibrary?
        var document: Document<TextDocument>?
        var id: DocumentID?
        if scenario != .newLibrary {
            // Before: made, edited, and (but for a first save) saved; then perhaps rewritten by another program.
            library = try Self.library(at: root, fileSystem: PosixFileSystem(synchronizes: false), durability: .off)
            document = try await library!.create(TextDocument.self, named: "Notes")
            id = document!.id
            try await document!.edit(.append("first line\n"))
            if scenario != .firstSave { try await document!.save() }
            try await document!.close()
            document = nil
            library = nil
            if scenario == .saveAfterExternalModification {
                try Data("rewritten by another program\n".utf8).write(to: file)
            }
        }
        oldFile = try? Data(contentsOf: file)

        // The reopening, edit and save, on the model (what is on disk now counts as durable).
        var fileStep: Int?
        var storeEvent: Int?
        switch cut {
        case .fileStep(let step): fileStep = step
        case .storeEvent(let event): storeEvent = event
        case nil: break
        }
        store = try PowerLossStore(modeling: root.appendingPathComponent(".folio"), cutAt: storeEvent, seed: seed)
        // A new library's directories are made through the model; an existing one's store directory is the VFS's.
        files =
            scenario == .newLibrary
            ? try PowerLossFileSystem(root: directory.url, cutAt: fileStep, sharing: store)
            : try PowerLossFileSystem(root: root, ignoring: [".folio"], cutAt: fileStep, sharing: store)
        var (textBeforeEdit, textAfterEdit) = ("", "")
        var (documentReturned, editReturned, saveReturned) = (false, false, false)
        do {
            library = try Self.library(at: root, fileSystem: files, durability: durability)
            if let id {
                document = try await library!.open(id, as: TextDocument.self)
            } else {
                document = try await library!.create(TextDocument.self, named: "Notes")
                id = document!.id
            }
            documentReturned = true
            textBeforeEdit = await document!.model.text
            try await document!.edit(.append("second line\n"))
            editReturned = true
            textAfterEdit = await document!.model.text
            try await document!.save()
            saveReturned = true
        } catch  where files.isCut {
        }
        // The store closes (and folds its log) as the library goes.
        document = nil
        library = nil
        (self.textBeforeEdit, self.textAfterEdit) = (textBeforeEdit, textAfterEdit)
        (self.documentReturned, self.editReturned, self.saveReturned) = (documentReturned, editReturned, saveReturned)
        self.id = id
        wasCut = files.isCut
        fileSteps = files.steps.count
        storeEvents = store.events
        newFile = saveReturned ? try? Data(contentsOf: file) : nil
    }

    /// The library as it reopens after the power cut, from the surviving files: the text of its document `id`
    /// (`nil` when the library does not have it), whether its log is sound, and the document's file.
    func reopen(id: DocumentID?) async throws -> (text: String?, isSound: Bool, file: Data?) {
        let survivors = try TemporaryDirectory(inMemory: true)
        let root = survivors.url.appendingPathComponent("Library", isDirectory: true)
        if files.root == directory.url {
            try files.materialize(into: survivors.url, seed: seed)
        } else {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
            try files.materialize(into: root, seed: seed)
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent(".folio"), withIntermediateDirectories: false)
        }
        // The store's files survive only in a store directory that did.
        let storeDirectory = root.appendingPathComponent(".folio", isDirectory: true)
        if FileManager.default.fileExists(atPath: storeDirectory.path) { try store.materialize(into: storeDirectory) }
        let library = try Self.library(at: root, fileSystem: PosixFileSystem(synchronizes: false), durability: .off)
        var text: String?
        if let id, try library.store.documents().contains(id) {
            let document = try await library.open(id, as: TextDocument.self)
            text = await document.model.text
            try await document.close()
        }
        let isSound = try library.store.verify().isSound
        return (text, isSound, try? Data(contentsOf: root.appendingPathComponent("Documents/Notes.txt")))
    }

    /// The library at `root`, with the same device, clock and identities in every run; its store is `.full` while the
    /// model runs (`.off` before and after, where nothing needs real fsyncs).
    static func library(at root: URL, fileSystem: any FileSystem, durability: Durability) throws -> DocumentLibrary {
        try DocumentLibrary(
            at: root, key: DeviceKey(using: SeededIdentifierSource(seed: 0xD0C4)), deviceName: "Test Device",
            types: DocumentTypeRegistry([TextDocument.documentType]), clock: ManualClock(start: LibraryFixture.start),
            identifiers: SeededIdentifierSource(seed: 1), fileSystem: fileSystem, durability: durability,
            autosave: .manual, backgroundWork: false)
    }
}

/// A file system that drops one kind of sync (the call returns, nothing is synced): a save pipeline that forgot it.
private struct DroppingSyncs: FileSystem {
    let base: PowerLossFileSystem
    let dropped: FaultInjectingFileSystem.Step.Kind

    func itemKind(at url: URL) throws -> FileItemKind { try base.itemKind(at: url) }
    func attributes(at url: URL) throws -> FileAttributes { try base.attributes(at: url) }
    func contents(of url: URL) throws -> Data { try base.contents(of: url) }
    func contentsOfDirectory(at url: URL) throws -> [String] { try base.contentsOfDirectory(at: url) }
    func createDirectory(at url: URL) throws { try base.createDirectory(at: url) }
    func writeFile(_ data: Data, to url: URL) throws { try base.writeFile(data, to: url) }
    func rename(_ source: URL, to destination: URL) throws { try base.rename(source, to: destination) }
    func remove(at url: URL) throws { try base.remove(at: url) }

    func synchronizeFile(at url: URL) throws {
        if dropped != .synchronizeFile { try base.synchronizeFile(at: url) }
    }

    func synchronizeDirectory(at url: URL) throws {
        if dropped != .synchronizeDirectory { try base.synchronizeDirectory(at: url) }
    }
}
