import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import Foundation
import Testing

/// Importing outside files and packages (the Inbox case): the first changes are the creation and a baseline; bad
/// contents, links and hostile names are refused with a typed error and nothing recorded.
@Suite struct DocumentImportTests {
    let fixture: LibraryFixture

    init() throws {
        fixture = try LibraryFixture()
    }

    /// An outside directory (not the library) holding what is imported.
    var inbox: URL {
        get throws { try fixture.directory.subdirectory("Inbox") }
    }

    /// Writes a pages package at `url` by hand, as another program would.
    func writePackage(at url: URL, text: String, images: [String: Data]) throws {
        try FileManager.default.createDirectory(
            at: url.appendingPathComponent("images"), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url.appendingPathComponent("text.txt"))
        let names = images.keys.sorted().map { "\"\($0)\"" }.joined(separator: ",")
        try Data(#"{"formatVersion":1,"generator":"Elsewhere","images":[\#(names)]}"#.utf8 + [0x0A])
            .write(to: url.appendingPathComponent("Info.json"))
        for (name, bytes) in images { try bytes.write(to: url.appendingPathComponent("images/\(name)")) }
    }

    /// Every file under `url`, with its contents, to check that an import did not modify its source.
    func snapshot(of url: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = try #require(FileManager.default.enumerator(atPath: url.path))
        for case let path as String in enumerator {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: url.appendingPathComponent(path).path, isDirectory: &isDirectory)
            result[path] = isDirectory.boolValue ? Data() : try Data(contentsOf: url.appendingPathComponent(path))
        }
        return result
    }

    @Test func importsAFlatTextFile() async throws {
        let library = try fixture.library()
        let source = try inbox.appendingPathComponent("Meeting notes.txt")
        try Data("agenda\n- one\n".utf8).write(to: source)

        let info = try await library.importFile(at: source, as: TextDocument.self)
        #expect(info.displayName == "Meeting notes")
        #expect(info.typeIdentifier == "com.folio.text")
        #expect(info.container == .local)
        let log = try library.log(of: info.id)
        #expect(log.map(\.kind.tag) == [1, 2], "a creation, then a baseline")
        #expect(log.last?.baselineContents == .data(Data("agenda\n- one\n".utf8)))
        #expect(try fixture.text(at: source) == "agenda\n- one\n", "the source is left alone")

        let document = try await library.open(info.id, as: TextDocument.self)
        #expect(await document.model.text == "agenda\n- one\n")
        try await document.save()
        #expect(try fixture.text(at: fixture.documentFile("Meeting notes.txt")) == "agenda\n- one\n")
    }

    @Test func importsUnderAGivenNameIntoTheSharedContainer() async throws {
        let library = try fixture.library()
        let source = try inbox.appendingPathComponent("export.folio-records")
        try Data(#"{"records":[{"fields":{"name":"Ann"},"id":"r1"}]}"#.utf8).write(to: source)
        let info = try await library.importFile(at: source, as: RecordsDocument.self, named: "People", into: .shared)
        #expect(info.displayName == "People")
        #expect(info.container == .shared)
        let document = try await library.open(info.id, as: RecordsDocument.self)
        #expect(await document.model["r1"]?.fields == ["name": "Ann"])
    }

    @Test func importsAPackageDirectory() async throws {
        let library = try fixture.library()
        let source = try inbox.appendingPathComponent("Trip.folio-pages")
        let images = ["a.png": Data(repeating: 1, count: 40), "b.png": Data(repeating: 2, count: 60)]
        try writePackage(at: source, text: "Day one.", images: images)
        let before = try snapshot(of: source)

        let info = try await library.importFile(at: source, as: PagesDocument.self)
        #expect(info.displayName == "Trip")
        #expect(try snapshot(of: source) == before, "the source package is left alone")
        let document = try await library.open(info.id, as: PagesDocument.self)
        #expect(await document.model == (try PagesDocument(text: "Day one.", images: images)))

        try await document.edit(.removeImage(name: "a.png"))
        try await document.save()
        let saved = fixture.documentFile("Trip.folio-pages")
        #expect(Disk.names(in: saved.appendingPathComponent("images")) == ["b.png"])
        #expect(try fixture.text(at: saved.appendingPathComponent("text.txt")) == "Day one.")
    }

    /// Importing only reads: what sits next to the file or inside the package (another program's files, or
    /// leftovers of a save that a library of its own would clean up) stays as it is.
    @Test func importingAFlatFileLeavesWhatIsBesideIt() async throws {
        let library = try fixture.library()
        let source = try inbox.appendingPathComponent("Notes.txt")
        try Data("text\n".utf8).write(to: source)
        try Data("someone's work in progress".utf8).write(to: try inbox.appendingPathComponent(".Notes.txt.folio-tmp"))
        let before = try snapshot(of: try inbox)

        let info = try await library.importFile(at: source, as: TextDocument.self)
        #expect(try library.log(of: info.id).last?.baselineContents == .data(Data("text\n".utf8)))
        #expect(try snapshot(of: try inbox) == before, "nothing next to the source was removed")
    }

    @Test func importingAPackageLeavesItsBookkeepingAndWhatIsBesideIt() async throws {
        let library = try fixture.library()
        let source = try inbox.appendingPathComponent("Trip.folio-pages")
        try writePackage(at: source, text: "Day one.", images: ["a.png": Data(repeating: 1, count: 40)])
        // What recovery would remove: an uncommitted manifest and staging directory inside the package, and an
        // unfinished new package beside it.
        try Data("{}".utf8).write(to: source.appendingPathComponent(".folio-manifest.folio-tmp"))
        try FileManager.default.createDirectory(
            at: source.appendingPathComponent(".folio-staging-7"), withIntermediateDirectories: true)
        try Data("staged".utf8).write(to: source.appendingPathComponent(".folio-staging-7/member"))
        let sibling = try inbox.appendingPathComponent(".Trip.folio-pages.folio-tmp")
        try FileManager.default.createDirectory(at: sibling, withIntermediateDirectories: true)
        try Data("precious".utf8).write(to: sibling.appendingPathComponent("notes.txt"))
        let before = try snapshot(of: try inbox)

        let info = try await library.importFile(at: source, as: PagesDocument.self)
        #expect(info.displayName == "Trip")
        #expect(try snapshot(of: try inbox) == before, "nothing inside or next to the source was removed")
    }

    @Test func aPackageWhoseCommittedSaveDidNotFinishIsRefusedUntouched() async throws {
        let library = try fixture.library()
        let source = try inbox.appendingPathComponent("Trip.folio-pages")
        try writePackage(at: source, text: "Day one.", images: [:])
        // A save that reached its commit point (manifest 2) but not the end: its new text is still staged.
        let info = try Data(contentsOf: source.appendingPathComponent("Info.json"))
        let text = Data("Day two.".utf8)
        func entry(_ path: String, _ contents: Data) -> String {
            #"{"path": "\#(path)", "size": \#(contents.count), "sha256": "\#(ContentHash(hashing: contents).hex)"}"#
        }
        let manifest =
            #"{"format": "folio-package-manifest-1", "generation": 2, "files": ["#
            + entry("Info.json", info) + ", " + entry("text.txt", text) + #"], "directories": ["images"]}"#
        try Data(manifest.utf8).write(to: source.appendingPathComponent(".folio-manifest"))
        let staging = source.appendingPathComponent(".folio-staging-2")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        try text.write(to: staging.appendingPathComponent(ContentHash(hashing: Data("text.txt".utf8)).hex))
        let before = try snapshot(of: try inbox)

        let error = try await #require(throws: DocumentError.self) {
            try await library.importFile(at: source, as: PagesDocument.self)
        }
        #expect(error.code == .save)
        #expect((error.cause as? SaveError)?.code == .corruptPackage, "\(error)")
        #expect(try snapshot(of: try inbox) == before, "the unfinished save is left for its own library to finish")
        #expect(try await library.documents(includingDeleted: true).isEmpty)
    }

    @Test func contentsTheModelRefusesAreInvalidContents() async throws {
        let library = try fixture.library()
        let source = try inbox.appendingPathComponent("Binary.txt")
        try Data([0x66, 0x6F, 0xFF, 0xFE]).write(to: source)
        let error = try await #require(throws: DocumentError.self) {
            try await library.importFile(at: source, as: TextDocument.self)
        }
        #expect(error.code == .invalidContents)
        let cause = try #require(error.cause as? ModelError)
        #expect(cause.code == .invalidContents)
        #expect(error.message == "Binary.txt is not a valid com.folio.text document")
        #expect(
            error.description == "Binary.txt is not a valid com.folio.text document: \(cause.message)",
            "the reason, once")

        let records = try inbox.appendingPathComponent("Bad.folio-records")
        try Data(#"{"records":[{"id":"r1"}]}"#.utf8).write(to: records)
        let recordsError = try await #require(throws: DocumentError.self) {
            try await library.importFile(at: records, as: RecordsDocument.self)
        }
        #expect(recordsError.code == .invalidContents)

        let package = try inbox.appendingPathComponent("NoInfo.folio-pages")
        try writePackage(at: package, text: "t", images: [:])
        try FileManager.default.removeItem(at: package.appendingPathComponent("Info.json"))
        let packageError = try await #require(throws: DocumentError.self) {
            try await library.importFile(at: package, as: PagesDocument.self)
        }
        #expect(packageError.code == .invalidContents)
        #expect(try await library.documents(includingDeleted: true).isEmpty, "nothing was recorded")
    }

    @Test func aMissingFileOrTheWrongFormCannotBeRead() async throws {
        let library = try fixture.library()
        let missing = try await #require(throws: DocumentError.self) {
            try await library.importFile(at: try inbox.appendingPathComponent("Nothing.txt"), as: TextDocument.self)
        }
        #expect(missing.code == .save)
        #expect((missing.cause as? SaveError)?.code == .notFound)

        // A flat file where a package is expected, and a directory where a flat file is.
        let flat = try inbox.appendingPathComponent("Flat.folio-pages")
        try Data("not a directory".utf8).write(to: flat)
        let flatError = try await #require(throws: DocumentError.self) {
            try await library.importFile(at: flat, as: PagesDocument.self)
        }
        #expect(flatError.code == .save)
        let directory = try fixture.directory.subdirectory("Inbox/Folder.txt")
        let directoryError = try await #require(throws: DocumentError.self) {
            try await library.importFile(at: directory, as: TextDocument.self)
        }
        #expect(directoryError.code == .save)
        #expect(try await library.documents(includingDeleted: true).isEmpty)
    }

    @Test(arguments: ["/etc/passwd", "../../outside.txt", "text.txt"])
    func aPackageWithASymbolicLinkIsRefused(destination: String) async throws {
        let library = try fixture.library()
        let source = try inbox.appendingPathComponent("Linked.folio-pages")
        try writePackage(at: source, text: "t", images: [:])
        try FileManager.default.createSymbolicLink(
            atPath: source.appendingPathComponent("images/evil.png").path, withDestinationPath: destination)

        let error = try await #require(throws: DocumentError.self) {
            try await library.importFile(at: source, as: PagesDocument.self)
        }
        #expect(error.code == .save)
        let cause = try #require(error.cause as? SaveError)
        #expect(cause.code == .unsafePackage, "\(cause)")
        #expect(try await library.documents(includingDeleted: true).isEmpty)
    }

    @Test func aPackageThatIsItselfALinkIsRefused() async throws {
        let library = try fixture.library()
        let real = try inbox.appendingPathComponent("Real.folio-pages")
        try writePackage(at: real, text: "t", images: [:])
        let link = try inbox.appendingPathComponent("Link.folio-pages")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        let error = try await #require(throws: DocumentError.self) {
            try await library.importFile(at: link, as: PagesDocument.self)
        }
        #expect((error.cause as? SaveError)?.code == .unsafePackage)
    }

    @Test(arguments: ["../evil", "/abs", ".hidden", "a/b", " spaced", "nul\u{0}"])
    func aHostileNameIsRefused(name: String) async throws {
        let library = try fixture.library()
        let source = try inbox.appendingPathComponent("Fine.txt")
        try Data("text".utf8).write(to: source)
        let error = try await #require(throws: DocumentError.self) {
            try await library.importFile(at: source, as: TextDocument.self, named: name)
        }
        #expect(error.code == .invalidName)
        #expect(try await library.documents(includingDeleted: true).isEmpty)
        #expect(Disk.names(in: fixture.root) == [".folio", "Documents", "Shared"])
    }

    @Test func aHiddenFileNeedsAName() async throws {
        let library = try fixture.library()
        let source = try inbox.appendingPathComponent(".profile.txt")
        try Data("text".utf8).write(to: source)
        let error = try await #require(throws: DocumentError.self) {
            try await library.importFile(at: source, as: TextDocument.self)
        }
        #expect(error.code == .invalidName)
        let info = try await library.importFile(at: source, as: TextDocument.self, named: "Profile")
        #expect(info.displayName == "Profile")
    }

    @Test(arguments: ["../escape.png", "sub/dir.png", ".."])
    func aPackageListingHostileImageNamesIsInvalid(name: String) async throws {
        let library = try fixture.library()
        let source = try inbox.appendingPathComponent("Hostile.folio-pages")
        try writePackage(at: source, text: "t", images: [:])
        let escaped = name.replacingOccurrences(of: "\"", with: "\\\"")
        try Data(#"{"formatVersion":1,"generator":"Elsewhere","images":["\#(escaped)"]}"#.utf8)
            .write(to: source.appendingPathComponent("Info.json"))
        let error = try await #require(throws: DocumentError.self) {
            try await library.importFile(at: source, as: PagesDocument.self)
        }
        #expect(error.code == .invalidContents)
        #expect(try await library.documents(includingDeleted: true).isEmpty)
    }

    @Test func aHostileImageNameCannotBeEditedIn() async throws {
        let library = try fixture.library()
        let document = try await library.create(PagesDocument.self, named: "Album")
        for name in ["../../escape", "/etc/passwd", "..", ".", "a/b", "", "back\\slash"] {
            let error = try await #require(throws: DocumentError.self, "\(name)") {
                try await document.edit(.putImage(name: name, bytes: Data([1])))
            }
            #expect(error.code == .invalidOperation, "\(name)")
        }
        try await document.save()
        #expect(Disk.names(in: fixture.root) == [".folio", "Documents", "Shared"])
        #expect(fixture.documentNames == ["Album.folio-pages"])
    }
}
