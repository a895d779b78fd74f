import FolioCore
import FolioDocuments
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A crash at every step of a save, flat and package, with clean and torn writes: after a restart (a fresh pipeline
/// on the real file system, recovery, read) the document is exactly the previous snapshot or exactly the new one —
/// the previous one up to the commit point, the new one after it — and no leftover remains.
@Suite(.workPool) struct SaveCrashTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// The faults to try at `step`: a clean crash, and for a write, a crash after half of its bytes.
    static func faults(at index: Int, _ step: FaultInjectingFileSystem.Step) -> [FaultInjectingFileSystem.Fault] {
        var faults = [FaultInjectingFileSystem.Fault.crash(atStep: index)]
        if step.kind == .writeFile && step.byteCount > 1 {
            faults.append(.crash(atStep: index, writtenPrefix: step.byteCount / 2))
        }
        return faults
    }

    // MARK: - Flat

    /// A directory holding `Notes.txt` with `contents`, or without it when `nil`.
    func prepareFlat(_ name: String, _ contents: Data?) throws -> URL {
        let url = try directory.subdirectory(name).appendingPathComponent("Notes.txt")
        if let contents { try SavePipeline().saveFlat(contents, to: url) }
        return url
    }

    /// What a restarted device finds at `url` after recovery: `nil` when there is no file.
    func restartFlat(at url: URL) throws -> Data? {
        let pipeline = SavePipeline()
        try pipeline.recoverFlat(at: url)
        return Disk.exists(url) ? try pipeline.readFlat(at: url) : nil
    }

    @Test(arguments: [true, false])
    func aFlatSaveCrashedAtAnyStepLeavesTheOldOrTheNewFile(hasPreviousFile: Bool) throws {
        let old: Data? = hasPreviousFile ? Data("old contents".utf8) : nil
        let new = Data("the new contents, longer".utf8)

        let dryRun = FaultInjectingFileSystem()
        try SavePipeline(fileSystem: dryRun).saveFlat(new, to: try prepareFlat("dry-run", old))
        let steps = dryRun.steps
        #expect(steps.map(\.kind) == [.writeFile, .synchronizeFile, .rename, .synchronizeDirectory])
        let commit = try #require(steps.firstIndex { $0.kind == .rename })

        for (index, step) in steps.enumerated() {
            for (variant, fault) in Self.faults(at: index, step).enumerated() {
                let url = try prepareFlat("crash-\(index)-\(variant)", old)
                let pipeline = SavePipeline(fileSystem: FaultInjectingFileSystem(faults: [fault]))
                let error = try #require(throws: SaveError.self) { try pipeline.saveFlat(new, to: url) }
                #expect(error.code == .crashed)

                let found = try restartFlat(at: url)
                #expect(found == (index <= commit ? old : new), "crash at step \(index) (\(step)), variant \(variant)")
                #expect(
                    Disk.leftovers(in: url.deletingLastPathComponent()).isEmpty,
                    "leftovers after a crash at step \(index)")
            }
        }
    }

    // MARK: - Packages

    /// A package save to crash.
    enum Scenario: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Several files; the new version changes one, adds one in a new directory, removes one and its directory.
        case modify
        /// The same, rewritten in full (`incremental: false`).
        case rewriteAll
        /// A file becomes a directory and a directory becomes a file.
        case restructure
        /// The first save: no package yet.
        case create

        var testDescription: String { rawValue }

        var old: FilePackage? {
            get throws {
                switch self {
                case .modify, .rewriteAll: try Samples.oldPackage()
                case .restructure: try Samples.package(["x": "a file", "y/z.txt": "deep", "keep.txt": "keep"])
                case .create: nil
                }
            }
        }

        var new: FilePackage {
            get throws {
                switch self {
                case .modify, .rewriteAll, .create: try Samples.newPackage()
                case .restructure: try Samples.package(["x/inner.txt": "inner", "y": "now a file", "keep.txt": "keep"])
                }
            }
        }

        var incremental: Bool { self != .rewriteAll }
    }

    /// A fresh package directory holding the scenario's old version.
    func prepare(_ scenario: Scenario, _ name: String) throws -> URL {
        let url = try directory.subdirectory(name).appendingPathComponent("Pages.folio")
        if let old = try scenario.old { try SavePipeline().savePackage(old, to: url) }
        return url
    }

    /// What a restarted device finds at `url` after recovery: `nil` when there is no package.
    func restart(at url: URL) throws -> FilePackage? {
        let pipeline = SavePipeline()
        try pipeline.recoverPackage(at: url)
        guard Disk.exists(url) else { return nil }
        return try pipeline.readPackage(at: url)
    }

    /// The steps of the scenario's save, from a dry run, and the index of its commit point.
    func dryRun(_ scenario: Scenario) throws -> (steps: [FaultInjectingFileSystem.Step], commit: Int) {
        let url = try prepare(scenario, "dry-run")
        let injector = FaultInjectingFileSystem()
        try SavePipeline(fileSystem: injector).savePackage(try scenario.new, to: url, incremental: scenario.incremental)
        let steps = injector.steps
        let commit = try #require(
            steps.firstIndex { step in
                step.kind == .rename
                    && (step.destination?.hasSuffix("/.folio-manifest") == true || step.destination == url.path)
            })
        return (steps, commit)
    }

    @Test(arguments: Scenario.allCases)
    func aPackageSaveCrashedAtAnyStepLeavesTheOldOrTheNewPackage(scenario: Scenario) throws {
        let (steps, commit) = try dryRun(scenario)
        #expect(steps.count > commit + 1)
        let old = try scenario.old
        let new = try scenario.new
        for (index, step) in steps.enumerated() {
            for (variant, fault) in Self.faults(at: index, step).enumerated() {
                let url = try prepare(scenario, "crash-\(index)-\(variant)")
                let injector = FaultInjectingFileSystem(faults: [fault])
                let error = try #require(throws: SaveError.self) {
                    try SavePipeline(fileSystem: injector).savePackage(new, to: url, incremental: scenario.incremental)
                }
                #expect(error.code == .crashed)

                let found = try restart(at: url)
                #expect(found == (index <= commit ? old : new), "crash at step \(index) (\(step)), variant \(variant)")
                #expect(Disk.leftovers(in: url).isEmpty, "leftovers in the package after a crash at step \(index)")
                #expect(
                    Disk.leftovers(in: url.deletingLastPathComponent()).isEmpty,
                    "leftovers next to it after a crash at step \(index)")
                // The device goes on: the next save brings the new version whatever the crash left.
                try SavePipeline().savePackage(new, to: url, incremental: false)
                #expect(try restart(at: url) == new)
            }
        }
    }

    /// A crash after the commit point, then another crash at each step of the recovery: recovery can always be
    /// run again and completes the new package.
    @Test(arguments: [Scenario.modify, .restructure])
    func recoveryCrashedAtAnyStepCanBeRunAgain(scenario: Scenario) throws {
        let (steps, commit) = try dryRun(scenario)
        let new = try scenario.new
        // The last step (the final fsync) leaves no work for recovery.
        for saveStep in (commit + 1)..<(steps.count - 1) {
            func crashSave(_ name: String) throws -> URL {
                let url = try prepare(scenario, name)
                let injector = FaultInjectingFileSystem(faults: [.crash(atStep: saveStep)])
                #expect(throws: SaveError.self) {
                    try SavePipeline(fileSystem: injector).savePackage(new, to: url, incremental: scenario.incremental)
                }
                return url
            }
            let dryRunURL = try crashSave("recovery-dry-run-\(saveStep)")
            let recoveryRun = FaultInjectingFileSystem()
            try SavePipeline(fileSystem: recoveryRun).recoverPackage(at: dryRunURL)
            #expect(
                recoveryRun.stepCount > 0, "nothing to recover after a crash at step \(saveStep) (\(steps[saveStep]))")

            for recoveryStep in 0..<recoveryRun.stepCount {
                let url = try crashSave("recovery-\(saveStep)-\(recoveryStep)")
                let injector = FaultInjectingFileSystem(faults: [.crash(atStep: recoveryStep)])
                #expect(throws: SaveError.self) { try SavePipeline(fileSystem: injector).recoverPackage(at: url) }
                #expect(
                    try restart(at: url) == new, "save crashed at step \(saveStep), recovery at step \(recoveryStep)")
                #expect(Disk.leftovers(in: url).isEmpty)
            }
        }
    }

    @Test func aPackageSaveCrashedBeforeTheCommitLeavesNothingThatChangedInPlace() throws {
        let scenario = Scenario.modify
        let (steps, commit) = try dryRun(scenario)
        for step in steps[..<commit] {
            // Before the commit point a save writes only bookkeeping: staging, the manifest being written.
            let name = URL(fileURLWithPath: step.path).lastPathComponent
            let parent = URL(fileURLWithPath: step.path).deletingLastPathComponent().lastPathComponent
            #expect(
                name.hasPrefix(".folio-") || parent.hasPrefix(".folio-staging-") || step.kind == .synchronizeDirectory,
                "\(step)")
        }
    }
}
