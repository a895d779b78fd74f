import FolioCore
import FolioDocuments
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Reading packages from disk: hostile names, links, special files, bad manifests, and recovery of leftovers.
@Suite(.workPool) struct PackageReadTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    var url: URL { directory.file("Pages.folio") }

    /// A saved package with a few members.
    func savedPackage() throws -> FilePackage {
        let package = try Samples.oldPackage()
        try SavePipeline().savePackage(package, to: url)
        return package
    }

    func expectUnsafe(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let error = try #require(throws: SaveError.self, sourceLocation: sourceLocation) { try body() }
        #expect(error.code == .unsafePackage, "\(error)", sourceLocation: sourceLocation)
    }

    // MARK: - Entry names

    @Test(arguments: [
        "..", "../evil", "a/../b", "/abs", "/", "a//b", "a/./b", ".", "", "a/", "a\u{0}b", "a\\b", "..\\evil",
    ])
    func packagePathRejectsHostileNames(text: String) throws {
        let error = try #require(throws: PackageError.self) { try PackagePath(text) }
        #expect(error.code == .invalidPath)
    }

    @Test(arguments: ["a", "a/b", "images/cover.png", ".hidden", "a b/ü.txt", "...", "a..b"])
    func packagePathAcceptsOrdinaryNames(text: String) throws {
        #expect(try PackagePath(text).description == text)
    }

    // MARK: - Links and special files

    @Test(arguments: ["/etc", "../outside", "text.md"])
    func aSymbolicLinkInThePackageIsRefused(destination: String) throws {
        _ = try savedPackage()
        let outside = try directory.subdirectory("outside")
        try FileManager.default.createSymbolicLink(
            atPath: url.appendingPathComponent("images/link").path,
            withDestinationPath: destination)
        try expectUnsafe { _ = try SavePipeline().readPackage(at: url) }
        try expectUnsafe { try SavePipeline().savePackage(try Samples.newPackage(), to: url) }
        #expect(Disk.names(in: outside).isEmpty)
        #expect(Disk.leftovers(in: url).isEmpty)
    }

    @Test func aLinkedDirectoryIsNeverWrittenThrough() throws {
        _ = try savedPackage()
        let outside = try directory.subdirectory("outside")
        // The package's `media` directory is a link to a directory outside it.
        try FileManager.default.createSymbolicLink(
            atPath: url.appendingPathComponent("media").path,
            withDestinationPath: outside.path)
        try expectUnsafe { try SavePipeline().savePackage(try Samples.newPackage(), to: url) }
        #expect(Disk.names(in: outside).isEmpty)
    }

    @Test func aPackageThatIsALinkIsRefused() throws {
        let real = directory.file("Real.folio")
        try SavePipeline().savePackage(try Samples.oldPackage(), to: real)
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: real.path)
        try expectUnsafe { _ = try SavePipeline().readPackage(at: url) }
        try expectUnsafe { try SavePipeline().savePackage(try Samples.newPackage(), to: url) }
        #expect(try SavePipeline().readPackage(at: real) == Samples.oldPackage())
    }

    @Test func aFIFOInThePackageIsRefusedWithoutBlocking() throws {
        _ = try savedPackage()
        #expect(mkfifo(url.appendingPathComponent("images/pipe").path, 0o644) == 0)
        try expectUnsafe { _ = try SavePipeline().readPackage(at: url) }
        try expectUnsafe { try SavePipeline().savePackage(try Samples.newPackage(), to: url) }
    }

    @Test func aNameWithABackslashOnDiskIsRefused() throws {
        _ = try savedPackage()
        try Disk.write("x", to: url.appendingPathComponent("images/a\\b.png"))
        let error = try #require(throws: SaveError.self) { _ = try SavePipeline().readPackage(at: url) }
        #expect(error.code == .unsafePackage)
        #expect(error.message.contains("backslash"))
    }

    // MARK: - Manifests

    /// Writes a manifest by hand.
    func writeManifest(generation: Int = 1, files: [(path: String, contents: String)], directories: [String] = [])
        throws
    {
        let entries = files.map { file in
            """
            {"path": \(jsonString(file.path)), "size": \(file.contents.utf8.count), "sha256": "\(ContentHash(hashing: Data(file.contents.utf8)).hex)"}
            """
        }
        let text = """
            {"format": "folio-package-manifest-1", "generation": \(generation),
             "files": [\(entries.joined(separator: ","))], "directories": [\(directories.map(jsonString).joined(separator: ","))]}
            """
        try Disk.write(text, to: url.appendingPathComponent(".folio-manifest"))
    }

    func jsonString(_ text: String) -> String {
        String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
    }

    @Test(arguments: [
        "../evil", "/tmp/evil", "a/../../evil", ".folio-staging-1/x", "../\u{301}evil", "a/..\u{301}",
        ".folio-\u{301}x",
    ])
    func aManifestListingAnUnsafePathIsRefusedAndNothingIsWrittenOutside(path: String) throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try writeManifest(generation: 5, files: [(path, "evil")])
        // A committed staging directory holding the "member", so that recovery would roll it forward.
        let staging = url.appendingPathComponent(".folio-staging-5")
        try Disk.write("evil", to: staging.appendingPathComponent(ContentHash(hashing: Data(path.utf8)).hex))

        try expectUnsafe { try SavePipeline().recoverPackage(at: url) }
        try expectUnsafe { _ = try SavePipeline().readPackage(at: url) }
        try expectUnsafe { try SavePipeline().savePackage(try Samples.newPackage(), to: url) }
        #expect(!Disk.exists(directory.file("evil")))
        #expect(!Disk.exists(URL(fileURLWithPath: "/tmp/evil")))
        #expect(Disk.names(in: directory.url) == ["Pages.folio"])
        #expect(Disk.names(in: url) == [".folio-manifest", ".folio-staging-5"])
    }

    @Test(arguments: [
        "not json",
        #"{"format": "something-else", "generation": 1, "files": [], "directories": []}"#,
        #"{"format": "folio-package-manifest-1", "generation": 0, "files": [], "directories": []}"#,
        #"{"format": "folio-package-manifest-1", "generation": 1, "files": [{"path": "a", "size": -1, "sha256": "00"}], "directories": []}"#,
    ])
    func aDamagedManifestIsCorrupt(text: String) throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Disk.write(text, to: url.appendingPathComponent(".folio-manifest"))
        let error = try #require(throws: SaveError.self) { _ = try SavePipeline().readPackage(at: url) }
        #expect(error.code == .corruptPackage)
    }

    @Test func aMemberThatDiffersFromTheManifestIsCorrupt() throws {
        _ = try savedPackage()
        try Disk.write("tampered", to: url.appendingPathComponent("text.md"))
        let error = try #require(throws: SaveError.self) { _ = try SavePipeline().readPackage(at: url) }
        #expect(error.code == .corruptPackage)
        #expect(error.message == "could not open Pages.folio: the contents of 'text.md' do not match its manifest")
    }

    @Test func aMissingMemberIsCorrupt() throws {
        _ = try savedPackage()
        try FileManager.default.removeItem(at: url.appendingPathComponent("images/a.png"))
        let error = try #require(throws: SaveError.self) { _ = try SavePipeline().readPackage(at: url) }
        #expect(error.code == .corruptPackage)
        #expect(error.message == "could not open Pages.folio: 'images/a.png' is listed in its manifest but missing")
    }

    @Test func aDamagedStagedCopyAfterTheCommitIsCorrupt() throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try writeManifest(generation: 2, files: [("a.txt", "right")])
        try Disk.write(
            "wrong", to: url.appendingPathComponent(".folio-staging-2/" + ContentHash(hashing: Data("a.txt".utf8)).hex))
        let error = try #require(throws: SaveError.self) { try SavePipeline().recoverPackage(at: url) }
        #expect(error.code == .corruptPackage)
    }

    @Test func readingAMissingPackageOrAFileFails() throws {
        #expect(try #require(throws: SaveError.self) { _ = try SavePipeline().readPackage(at: url) }.code == .notFound)
        try Disk.write("flat", to: url)
        #expect(
            try #require(throws: SaveError.self) { _ = try SavePipeline().readPackage(at: url) }.code == .corruptPackage
        )
    }

    // MARK: - Leftovers

    @Test func recoveryRemovesTheLeftoversOfAnUncommittedSave() throws {
        let package = try savedPackage()
        try Disk.write("half a manifest", to: url.appendingPathComponent(".folio-manifest.folio-tmp"))
        try Disk.write("staged", to: url.appendingPathComponent(".folio-staging-2/0123"))
        try Disk.write("older", to: url.appendingPathComponent(".folio-staging-7/4567"))
        try Disk.write("half a package", to: directory.file(".Pages.folio.folio-tmp/text.md"))
        #expect(try SavePipeline().readPackage(at: url) == package)
        #expect(Disk.names(in: url) == [".folio-manifest", "images", "notes", "text.md"])
        #expect(Disk.names(in: directory.url) == ["Pages.folio"])
    }

    @Test func aPackageWrittenByAnotherToolIsReadAsItIs() throws {
        try Disk.write("one", to: url.appendingPathComponent("a/one.txt"))
        try FileManager.default.createDirectory(
            at: url.appendingPathComponent("empty"), withIntermediateDirectories: true)
        var expected = try Samples.package(["a/one.txt": "one"])
        try expected.addDirectory(PackagePath("empty"))
        #expect(try SavePipeline().readPackage(at: url) == expected)
    }
}
