import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioTesting
import Foundation
import Synchronization
import Testing

/// Names and types that arrive from a peer are shown as given, but never decide where a file goes: whatever they
/// hold, a document's file is one file directly in its container's directory, with a name the file system takes,
/// and choosing that name always ends.
///
/// The peer here is hostile: it appends to its own store what no library call would record (the library refuses
/// such names locally), and the victim ingests it as a sync would.
@Suite struct HostileDocumentNameTests {
    static let hostileNames: [String] = [
        "../../escaped", "..", ".", "", "a/b", "/absolute", "back\\slash", "nul\u{0}inside", "line\nbreak",
        "tab\tand\u{7F}delete", ".hidden", "\u{202E}txt.exe", "   ",
        String(repeating: "x", count: 300),
        String(repeating: "é", count: 128),
        String(repeating: "😀", count: 64),
        String(repeating: "x", count: 254),
        "e" + String(repeating: "\u{301}", count: 200),
        String(repeating: "../", count: 3_000),
    ]

    /// A document made on the Mac in the shared container, synced to and saved on the iPad.
    struct Peers {
        let macFixture: LibraryFixture
        let iPadFixture: LibraryFixture
        let mac: DocumentLibrary
        let iPad: DocumentLibrary

        init() throws {
            macFixture = try LibraryFixture(seed: 1)
            iPadFixture = try LibraryFixture(seed: 2)
            mac = try macFixture.library()
            iPad = try iPadFixture.library()
        }

        /// The iPad ingests what the Mac has of `id` and it lacks, as a sync would.
        func deliver(_ id: DocumentID) throws {
            try iPad.store.ingest(trusting: try mac.store.changes(of: id, since: iPad.store.vector(of: id)))
        }
    }

    /// What must hold of the iPad's library whatever a peer named a document: the document's file is directly in
    /// the shared directory, under a name the file system takes, and nothing is anywhere else.
    func expectContained(_ peers: Peers, _ id: DocumentID, text: String, named name: String) async throws {
        let fixture = peers.iPadFixture
        #expect(Disk.names(in: fixture.directory.url) == ["Library"], "nothing was written beside the library")
        #expect(Disk.names(in: fixture.root) == [".folio", "Documents", "Shared"])
        #expect(fixture.documentNames.isEmpty)
        let info = try #require(try await peers.iPad.info(of: id))
        #expect(info.displayName == name, "the name is shown as the peer gave it")
        let url = try await peers.iPad.fileURL(for: info)
        #expect(url.deletingLastPathComponent().standardizedFileURL.path == fixture.shared.standardizedFileURL.path)
        let fileName = url.lastPathComponent
        #expect(Disk.names(in: fixture.shared) == [fileName], "one file, directly in Shared/")
        #expect(fileName.utf8.count <= 255)
        #expect(!fileName.hasPrefix("."), "not hidden, and never . or ..")
        #expect(
            !fileName.unicodeScalars.contains { $0 == "/" || $0 == "\\" || $0.properties.generalCategory == .control })
        #expect(fileName.hasSuffix(".txt"))
        #expect(try fixture.text(at: fixture.shared.appendingPathComponent(fileName)) == text)
    }

    @Test(arguments: hostileNames)
    func aDocumentAPeerCreatedWithAHostileNameIsSavedInItsContainer(name: String) async throws {
        let peers = try Peers()
        let id = DocumentID(using: SeededIdentifierSource(seed: 77))
        try peers.mac.store.append(
            [
                .lifecycle(.create(name: name, type: TextDocument.documentType.identifier, container: .shared)),
                .baseline(contents: TextDocument(text: "from the peer\n").contents().encoded()),
            ], to: id)
        try peers.deliver(id)

        let iPad = peers.iPad
        let info = try #require(try await iPad.info(of: id))
        _ = try await finishing { try iPad.fileLocation(for: info) }
        let document = try await iPad.open(id, as: TextDocument.self)
        try await document.edit(.append("seen here\n"))
        try await document.save()
        try await document.close()
        try await expectContained(peers, id, text: "from the peer\nseen here\n", named: name)
    }

    /// The finding: a rename from a peer took the user's file wherever the name pointed at the next sync.
    @Test(arguments: hostileNames)
    func aHostileRenameFromAPeerKeepsTheFileInItsContainer(name: String) async throws {
        let peers = try Peers()
        let notes = try await peers.mac.create(
            TextDocument.self, named: "Notes", in: .shared, contents: TextDocument(text: "text\n"))
        try await notes.close()
        try peers.deliver(notes.id)
        let onIPad = try await peers.iPad.open(notes.id, as: TextDocument.self)
        try await onIPad.save()
        try await onIPad.close()
        #expect(Disk.names(in: peers.iPadFixture.shared) == ["Notes.txt"])

        try peers.mac.store.append(.lifecycle(.rename(to: name)), to: notes.id)
        try peers.deliver(notes.id)
        // What a sync does for each document it updated.
        let iPad = peers.iPad
        try await finishing { try iPad.followFile(of: notes.id) }
        try await expectContained(peers, notes.id, text: "text\n", named: name)
        #expect(
            try iPad.log(of: notes.id).filter(\.isBaseline).count == 1, "the moved file was known as the document's own"
        )

        // The file stays the document's own: editing and saving write it where it is.
        let reopened = try await iPad.open(notes.id, as: TextDocument.self)
        try await reopened.edit(.append("more\n"))
        try await reopened.save()
        try await reopened.close()
        try await expectContained(peers, notes.id, text: "text\nmore\n", named: name)
    }

    /// Two documents of one name just short of the limit: the second's number must fit too.
    @Test func namesakesWithALongNameBothGetFilesTheFileSystemTakes() async throws {
        let peers = try Peers()
        let name = String(repeating: "x", count: 251)
        var ids: [DocumentID] = []
        for seed in [81, 82] as [UInt64] {
            let id = DocumentID(using: SeededIdentifierSource(seed: seed))
            try peers.mac.store.append(
                [
                    .lifecycle(.create(name: name, type: TextDocument.documentType.identifier, container: .local)),
                    .baseline(contents: TextDocument(text: "\(seed)\n").contents().encoded()),
                ], to: id)
            try peers.deliver(id)
            ids.append(id)
        }
        let iPad = peers.iPad
        for id in ids {
            let info = try #require(try await iPad.info(of: id))
            _ = try await finishing { try iPad.fileLocation(for: info) }
            let document = try await iPad.open(id, as: TextDocument.self)
            try await document.save()
            try await document.close()
        }
        let names = peers.iPadFixture.documentNames
        #expect(names.count == 2)
        #expect(names.allSatisfy { $0.utf8.count <= 255 && $0.hasSuffix(".txt") && $0.hasPrefix("xxxx") })
        #expect(
            Set(try names.map { try peers.iPadFixture.text(at: peers.iPadFixture.documentFile($0)) }) == [
                "81\n", "82\n",
            ])
    }

    /// A type identifier from a peer gives the file's extension only when it is a plain one.
    @Test(arguments: ["com.example./../../evil", "com.example.a/b", "com.example.", "com.example.\u{0}x", "x"])
    func aHostileTypeFromAPeerNeverMakesAPathOutsideTheContainer(type: String) async throws {
        let peers = try Peers()
        let id = DocumentID(using: SeededIdentifierSource(seed: 91))
        try peers.mac.store.append(.lifecycle(.create(name: "../Report", type: type, container: .shared)), to: id)
        try peers.deliver(id)
        let info = try #require(try await peers.iPad.info(of: id))
        #expect(info.typeIdentifier == type)
        let url = try await peers.iPad.fileURL(for: info)
        #expect(
            url.deletingLastPathComponent().standardizedFileURL.path
                == peers.iPadFixture.shared.standardizedFileURL.path)
        let fileName = url.lastPathComponent
        #expect(!fileName.hasPrefix("."))
        #expect(
            !fileName.unicodeScalars.contains { $0 == "/" || $0 == "\\" || $0.properties.generalCategory == .control })
        let fileExtension = String(fileName[fileName.index(after: try #require(fileName.lastIndex(of: ".")))...])
        #expect(
            !fileExtension.isEmpty
                && fileExtension.unicodeScalars.allSatisfy {
                    $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))
                })
    }

    /// A file system that cannot say whether a name is free gives an error, not a search that never ends (with
    /// the file-name lock held).
    @Test func aFileSystemThatCannotBeAskedGivesAnErrorInsteadOfSpinning() async throws {
        let fixture = try LibraryFixture()
        let fileSystem = FaultInjectingFileSystem()
        let library = try fixture.library(fileSystem: fileSystem)
        let notes = try await library.create(TextDocument.self, named: "Notes")
        let info = await notes.info
        // The device loses its disk: every call from now on fails.
        fileSystem.inject(.crash(atStep: fileSystem.stepCount))
        #expect(throws: FileSystemError.self) { try fileSystem.createDirectory(at: fixture.directory.file("lost")) }

        let error = try await #require(throws: DocumentError.self) {
            try await finishing { try library.fileLocation(for: info) }
        }
        #expect(error.code == .save)
        #expect(fixture.documentNames.isEmpty)
    }

    /// Every numbered name taken (by files put there by hand): the document gets a name made from its identity.
    @Test func whenEveryNumberedNameIsTakenTheFileIsNamedAfterTheDocumentsIdentity() async throws {
        let fixture = try LibraryFixture()
        let library = try fixture.library()
        try Disk.write("by hand\n", to: fixture.documentFile("Notes.txt"))
        for number in 2...DocumentLibrary.numberedFileNameLimit {
            try Disk.write("by hand\n", to: fixture.documentFile("Notes \(number).txt"))
        }
        let notes = try await library.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "mine\n"))
        try await notes.save()
        try await notes.close()
        let url = try await library.fileURL(for: try #require(try await library.info(of: notes.id)))
        #expect(url.lastPathComponent == "Notes \(notes.id).txt")
        #expect(try fixture.text(at: url) == "mine\n")
        #expect(try fixture.text(at: fixture.documentFile("Notes.txt")) == "by hand\n")
        #expect(fixture.documentNames.count == DocumentLibrary.numberedFileNameLimit + 1)

        // With that one taken too, a typed error.
        let other = try await library.create(TextDocument.self, named: "Notes")
        let otherInfo = await other.info
        try Disk.write("by hand\n", to: fixture.documentFile("Notes \(other.id).txt"))
        let error = try await #require(throws: DocumentError.self) { try await library.fileURL(for: otherInfo) }
        #expect(error.code == .alreadyExists)
    }

    /// Locally, a name that cannot be shown on one line is refused like one with a `/`; others are kept as given,
    /// and the file name is made safe.
    @Test(arguments: ["line\nbreak", "tab\there", "bell\u{7}", "del\u{7F}", "next\u{85}line", "separator\u{2028}"])
    func aLocalNameWithControlCharactersIsRefused(name: String) async throws {
        let fixture = try LibraryFixture()
        let library = try fixture.library()
        let error = try await #require(throws: DocumentError.self) {
            try await library.create(TextDocument.self, named: name)
        }
        #expect(error.code == .invalidName)
        let notes = try await library.create(TextDocument.self, named: "Notes")
        let renameError = try await #require(throws: DocumentError.self) {
            try await library.rename(notes.id, to: name)
        }
        #expect(renameError.code == .invalidName)
        #expect(try await library.info(of: notes.id)?.displayName == "Notes")
        try await notes.close()
    }

    @Test(arguments: [
        ("back\\slash", "back_slash.txt"), ("\u{202E}txt.exe", "_txt.exe.txt"), ("a..b", "a..b.txt"),
        (String(repeating: "é", count: 100), String(repeating: "é", count: 100) + ".txt"),
    ])
    func aLocalNameIsShownAsGivenAndItsFileNameIsMadeSafe(name: String, fileName: String) async throws {
        let fixture = try LibraryFixture()
        let library = try fixture.library()
        let notes = try await library.create(TextDocument.self, named: name, contents: TextDocument(text: "t"))
        try await notes.save()
        try await notes.close()
        #expect(try await library.info(of: notes.id)?.displayName == name)
        #expect(fixture.documentNames == [fileName])
    }
}

/// Runs `body` on a thread of its own and waits at most `seconds` for it: a call that never returns (a loop that
/// never ends) fails the test instead of hanging the run. The thread is left behind if it never returns.
func finishing<Value: Sendable>(within seconds: Int = 30, _ body: @escaping @Sendable () throws -> Value) async throws
    -> Value
{
    let outcome = Box<Result<Value, any Error>>()
    Thread { outcome.set(Result { try body() }) }.start()
    for _ in 0..<(seconds * 100) {
        if let result = outcome.value { return try result.get() }
        try await Task.sleep(for: .milliseconds(10))
    }
    throw Unfinished(seconds: seconds)
}

/// A call that did not return in time.
struct Unfinished: Error, CustomStringConvertible {
    let seconds: Int
    var description: String { "the call did not return within \(seconds) s (a loop that never ends?)" }
}

/// A value set once by one thread and read by another.
final class Box<Value: Sendable>: Sendable {
    private let storage = Mutex<Value?>(nil)
    var value: Value? { storage.withLock { $0 } }
    func set(_ value: Value) { storage.withLock { $0 = value } }
}
