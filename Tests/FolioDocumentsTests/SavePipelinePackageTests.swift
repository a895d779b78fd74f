import FolioCore
import FolioDocuments
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Package saves: round trips, incremental writes, the manifest, and failures that are rewritten next time.
@Suite(.workPool) struct SavePipelinePackageTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    var url: URL { directory.file("Pages.folio") }

    @Test func savesANewPackageAndReadsItBack() throws {
        let pipeline = SavePipeline()
        let package = try Samples.oldPackage()
        let report = try pipeline.savePackage(package, to: url, incremental: true)
        #expect(report.filesWritten == 4)
        #expect(report.filesRemoved == 0)
        #expect(try pipeline.readPackage(at: url) == package)
        #expect(Disk.names(in: url) == [".folio-manifest", "images", "notes", "text.md"])
        #expect(Disk.names(in: directory.url) == ["Pages.folio"])
        #expect(try pipeline.read(at: url, isPackage: true) == .package(package))
    }

    @Test func writesADeterministicManifest() throws {
        let pipeline = SavePipeline()
        try pipeline.savePackage(try Samples.package(["b.txt": "b", "a/c.txt": "c"]), to: url, incremental: true)
        let manifest = String(decoding: try Disk.contents(url.appendingPathComponent(".folio-manifest")), as: UTF8.self)
        let hashOfC = ContentHash(hashing: Data("c".utf8)).hex
        let hashOfB = ContentHash(hashing: Data("b".utf8)).hex
        #expect(
            manifest == """
                {
                  "directories" : [

                  ],
                  "files" : [
                    {
                      "path" : "a/c.txt",
                      "sha256" : "\(hashOfC)",
                      "size" : 1
                    },
                    {
                      "path" : "b.txt",
                      "sha256" : "\(hashOfB)",
                      "size" : 1
                    }
                  ],
                  "format" : "folio-package-manifest-1",
                  "generation" : 1
                }

                """)
    }

    @Test func rewritesOnlyChangedMembers() throws {
        let pipeline = SavePipeline()
        try pipeline.savePackage(try Samples.oldPackage(), to: url, incremental: true)
        let injector = FaultInjectingFileSystem()
        let new = try Samples.newPackage()
        let report = try SavePipeline(fileSystem: injector).savePackage(new, to: url, incremental: true)
        #expect(report.filesWritten == 2)
        #expect(report.filesRemoved == 1)
        let writes = injector.steps.filter { $0.kind == .writeFile }
        #expect(writes.count == 3)  // text.md, media/new.bin, the manifest
        #expect(writes.map(\.byteCount).reduce(0, +) == report.bytesWritten)
        #expect(!injector.steps.contains { $0.path.hasSuffix("a.png") || $0.path.hasSuffix("b.png") })
        #expect(try pipeline.readPackage(at: url) == new)
        #expect(Disk.names(in: url) == [".folio-manifest", "images", "media", "text.md"])
    }

    @Test func anUnchangedPackageWritesNothing() throws {
        let pipeline = SavePipeline()
        try pipeline.savePackage(try Samples.oldPackage(), to: url, incremental: true)
        let injector = FaultInjectingFileSystem()
        let report = try SavePipeline(fileSystem: injector).savePackage(
            try Samples.oldPackage(), to: url, incremental: true)
        #expect(report.isEmpty)
        #expect(injector.stepCount == 0)
    }

    @Test func aFullRewriteWritesEveryMember() throws {
        let pipeline = SavePipeline()
        let package = try Samples.oldPackage()
        try pipeline.savePackage(package, to: url, incremental: true)
        let report = try pipeline.savePackage(package, to: url, incremental: false)
        #expect(report.filesWritten == 4)
        #expect(report.bytesWritten > package.byteCount)
        #expect(try pipeline.readPackage(at: url) == package)
    }

    @Test func keepsExplicitAndEmptyDirectories() throws {
        let pipeline = SavePipeline()
        var package = try Samples.package(["a/file.txt": "x"])
        try package.addDirectory(PackagePath("a"))
        try package.addDirectory(PackagePath("empty/nested"))
        try pipeline.savePackage(package, to: url, incremental: true)
        #expect(try pipeline.readPackage(at: url) == package)

        // Removing the explicit directories removes the empty ones from disk.
        let plain = try Samples.package(["a/file.txt": "x"])
        try pipeline.savePackage(plain, to: url, incremental: true)
        #expect(try pipeline.readPackage(at: url) == plain)
        #expect(Disk.names(in: url) == [".folio-manifest", "a"])
    }

    @Test func turnsAFileIntoADirectoryAndBack() throws {
        let pipeline = SavePipeline()
        let asFile = try Samples.package(["x": "file", "y/z": "deep"])
        let asDirectory = try Samples.package(["x/inner.txt": "inner", "y": "now a file"])
        try pipeline.savePackage(asFile, to: url, incremental: true)
        try pipeline.savePackage(asDirectory, to: url, incremental: true)
        #expect(try pipeline.readPackage(at: url) == asDirectory)
        try pipeline.savePackage(asFile, to: url, incremental: true)
        #expect(try pipeline.readPackage(at: url) == asFile)
    }

    @Test func savesAnEmptyPackage() throws {
        let pipeline = SavePipeline()
        try pipeline.savePackage(FilePackage(), to: url, incremental: true)
        #expect(try pipeline.readPackage(at: url) == FilePackage())
        try pipeline.savePackage(try Samples.oldPackage(), to: url, incremental: true)
        try pipeline.savePackage(FilePackage(), to: url, incremental: true)
        #expect(try pipeline.readPackage(at: url) == FilePackage())
        #expect(Disk.names(in: url) == [".folio-manifest"])
    }

    @Test func takesOverADirectoryWithoutAManifest() throws {
        try Disk.write("outside tool", to: url.appendingPathComponent("old.txt"))
        let pipeline = SavePipeline()
        #expect(try pipeline.readPackage(at: url) == Samples.package(["old.txt": "outside tool"]))
        let package = try Samples.package(["new.txt": "mine"])
        let report = try pipeline.savePackage(package, to: url, incremental: true)
        #expect(report.filesRemoved == 1)
        #expect(try pipeline.readPackage(at: url) == package)
    }

    @Test func refusesReservedMemberNames() throws {
        let package = try Samples.package([".folio-manifest": "mine"])
        let error = try #require(throws: SaveError.self) {
            try SavePipeline().savePackage(package, to: url, incremental: true)
        }
        #expect(error.code == .unsafePackage)
        #expect(!Disk.exists(url))
    }

    /// The benchmark: a 100-image package, one image changed, writes that image and the manifest only.
    @Test func changingOneOfAHundredImagesWritesOnlyItAndTheManifest() throws {
        var files: [String: Data] = [:]
        for index in 0..<100 {
            files["images/image-\(index).png"] = Data(repeating: UInt8(index), count: 4096)
        }
        var package = try FilePackage(files: files)
        try SavePipeline().savePackage(package, to: url, incremental: true)

        let changed = Data(repeating: 0xFF, count: 5000)
        try package.setFile(changed, at: PackagePath("images/image-42.png"))
        let injector = FaultInjectingFileSystem()
        let report = try SavePipeline(fileSystem: injector).savePackage(package, to: url, incremental: true)
        let manifestSize = try Disk.contents(url.appendingPathComponent(".folio-manifest")).count
        #expect(injector.bytesWritten <= changed.count + manifestSize)
        #expect(injector.bytesWritten == report.bytesWritten)
        #expect(report.filesWritten == 1)
        #expect(try SavePipeline().readPackage(at: url) == package)
    }

    // MARK: - Failures

    /// The steps of saving `new` over `old`, from a dry run.
    func steps(of new: FilePackage, over old: FilePackage) throws -> [FaultInjectingFileSystem.Step] {
        let dryRun = directory.file("dry-run.folio")
        try SavePipeline().savePackage(old, to: dryRun, incremental: true)
        let injector = FaultInjectingFileSystem()
        try SavePipeline(fileSystem: injector).savePackage(new, to: dryRun, incremental: true)
        return injector.steps
    }

    @Test(arguments: [
        ("fsync of 'text.md'", FaultInjectingFileSystem.Step.Kind.synchronizeFile, "text.md"),
        ("fsync of the staging directory", .synchronizeDirectory, ".folio-staging-2"),
        ("fsync of the new manifest", .synchronizeFile, ".folio-manifest.folio-tmp"),
        ("fsync of the directory 'media'", .synchronizeDirectory, "/media"),
    ])
    func aFailedSyncFailsTheSaveAndTheNextFullSaveSucceeds(
        step: String, kind: FaultInjectingFileSystem.Step.Kind, pathSuffix: String
    ) throws {
        let old = try Samples.oldPackage()
        let new = try Samples.newPackage()
        let steps = try steps(of: new, over: old)
        let failing = try #require(
            steps.firstIndex { step in
                // The staged copy of text.md is named by its path's hash.
                let target =
                    pathSuffix == "text.md"
                    ? ".folio-staging-2/" + ContentHash(hashing: Data("text.md".utf8)).hex : pathSuffix
                return step.kind == kind && step.path.hasSuffix(target)
            })

        let pipeline = SavePipeline()
        try pipeline.savePackage(old, to: url, incremental: true)
        let injector = FaultInjectingFileSystem(faults: [.fail(atStep: failing, with: .ioError)])
        let faulty = SavePipeline(fileSystem: injector)
        let error = try #require(throws: SaveError.self) { try faulty.savePackage(new, to: url, incremental: true) }
        #expect(error.code == .syncFailed)
        #expect(error.message == "could not save Pages.folio: \(step) failed: I/O error")

        // The document is rewritten from its log: everything, not only what looked changed.
        let report = try faulty.savePackage(new, to: url, incremental: false)
        #expect(report.filesWritten == new.files.count)
        #expect(try pipeline.readPackage(at: url) == new)
        #expect(Disk.leftovers(in: url).isEmpty)
        #expect(Disk.leftovers(in: directory.url).isEmpty)
    }

    @Test(arguments: [
        (FileSystemErrorCode.noSpace, FaultInjectingFileSystem.Step.Kind.writeFile, SaveErrorCode.noSpace),
        (.permissionDenied, .createDirectory, .permissionDenied),
        (.readOnly, .createDirectory, .permissionDenied),
        (.noSpace, .rename, .noSpace),
    ])
    func aFullOrReadOnlyDiskFailsTheSaveAndLosesNothing(
        injected: FileSystemErrorCode, kind: FaultInjectingFileSystem.Step.Kind, expected: SaveErrorCode
    ) throws {
        let old = try Samples.oldPackage()
        let new = try Samples.newPackage()
        let failing = try #require(try steps(of: new, over: old).firstIndex { $0.kind == kind })
        let pipeline = SavePipeline()
        try pipeline.savePackage(old, to: url, incremental: true)
        let injector = FaultInjectingFileSystem(faults: [.fail(atStep: failing, with: injected, writtenPrefix: 3)])
        let error = try #require(throws: SaveError.self) {
            try SavePipeline(fileSystem: injector).savePackage(new, to: url, incremental: true)
        }
        #expect(error.code == expected)
        #expect(error.message.hasPrefix("could not save Pages.folio: "))
        #expect(try pipeline.readPackage(at: url) == old)
        #expect(Disk.leftovers(in: url).isEmpty)
        try pipeline.savePackage(new, to: url, incremental: false)
        #expect(try pipeline.readPackage(at: url) == new)
    }

    @Test func aFailureCreatingANewPackageLeavesNothing() throws {
        let injector = FaultInjectingFileSystem(faults: [.fail(atStep: 3, with: .noSpace, writtenPrefix: 1)])
        let error = try #require(throws: SaveError.self) {
            try SavePipeline(fileSystem: injector).savePackage(try Samples.oldPackage(), to: url, incremental: true)
        }
        #expect(error.code == .noSpace)
        #expect(Disk.names(in: directory.url).isEmpty)
    }
}
