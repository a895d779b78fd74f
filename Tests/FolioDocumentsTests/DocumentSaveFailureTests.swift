import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioTesting
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Saves that fail or crash, seen from a document: the state, the error, the next save, and after a crash a
/// restart on the real file system that finds every edit.
@Suite struct DocumentSaveFailureTests {
    let fixture: LibraryFixture

    init() throws {
        fixture = try LibraryFixture()
    }

    var file: URL { fixture.documentFile("Notes.txt") }

    /// A text document saved once as "saved", then edited to "saved, then edited" (unsaved), in a library on
    /// `fileSystem`. The first save takes steps 0-3; the next save starts at step 4.
    static func editedDocument(
        in fixture: LibraryFixture, on fileSystem: any FileSystem, autosave: AutosavePolicy = .manual
    ) async throws -> (DocumentLibrary, Document<TextDocument>) {
        let library = try fixture.library(fileSystem: fileSystem, autosave: autosave)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("saved"))
        try await document.save()
        try await document.edit(.append(", then edited"))
        return (library, document)
    }

    // MARK: Failures

    @Test func aFailedFsyncFailsTheSaveWithAClearErrorAndKeepsEveryEdit() async throws {
        let injector = FaultInjectingFileSystem(faults: [.fail(atStep: 5, with: .ioError)])
        let (library, document) = try await Self.editedDocument(in: fixture, on: injector)

        let error = try await #require(throws: DocumentError.self) { try await document.save() }
        #expect(error.code == .save)
        #expect(
            error.message == "could not save Notes; its edits are safe in the log and the next save rewrites the file")
        let cause = try #require(error.cause as? SaveError)
        #expect(cause.code == .syncFailed)
        #expect(
            error.description
                == "could not save Notes; its edits are safe in the log and the next save rewrites the file: could not save Notes.txt: fsync of the temporary file failed: I/O error"
        )
        #expect(await document.state == .savingError)
        #expect(await document.hasUnsavedChanges)
        #expect(try fixture.text(at: file) == "saved", "the previous file is intact")
        #expect(Disk.leftovers(in: fixture.documents).isEmpty)

        // The edits are in the log: a second process sees them.
        let other = try await fixture.library().open(document.id, as: TextDocument.self)
        #expect(await other.model.text == "saved, then edited")
        try await other.close()
        #expect(try library.log(of: document.id).filter(\.isBaseline).isEmpty)

        let report = try await document.save()
        #expect(report.filesWritten == 1)
        #expect(await document.state == .normal)
        #expect(try fixture.text(at: file) == "saved, then edited")
    }

    @Test func theStateStreamReportsTheErrorAndItsClearing() async throws {
        let injector = FaultInjectingFileSystem(faults: [.fail(atStep: 5, with: .ioError)])
        let (_, document) = try await Self.editedDocument(in: fixture, on: injector)
        await #expect(throws: DocumentError.self) { try await document.save() }
        try await document.edit(.append("!"))
        #expect(await document.state == .savingError, "editing goes on while the error stands")
        try await document.save()
        let states = try await document.closeCollectingStates()
        #expect(states == [.savingError, .normal, .closed])
    }

    @Test func aFailedDirectoryFsyncIsNotMistakenForAnOutsideChange() async throws {
        // Step 7: the rename happened, the fsync of the directory failed: the new file is there, unconfirmed.
        let injector = FaultInjectingFileSystem(faults: [.fail(atStep: 7, with: .ioError)])
        let (library, document) = try await Self.editedDocument(in: fixture, on: injector)
        let error = try await #require(throws: DocumentError.self) { try await document.save() }
        #expect((error.cause as? SaveError)?.code == .syncFailed)
        #expect(await document.state == .savingError)

        try await document.save()
        #expect(await document.state == .normal)
        #expect(try fixture.text(at: file) == "saved, then edited")
        let log = try library.log(of: document.id)
        #expect(log.filter(\.isBaseline).isEmpty, "the document's own file is no outside modification")
        #expect(try library.store.heads(of: document.id).count == 1, "no competing version was made")
    }

    @Test(arguments: [FileSystemErrorCode.noSpace, .permissionDenied, .readOnly])
    func aFullOrReadOnlyDirectoryGivesASavingErrorAndLosesNothing(code: FileSystemErrorCode) async throws {
        // Step 4 writes the temporary file (torn), step 5 removes it; step 6 is the write of the save on close.
        let injector = FaultInjectingFileSystem(faults: [
            .fail(atStep: 4, with: code, writtenPrefix: 3), .fail(atStep: 6, with: code),
        ])
        let saveOnClose = AutosavePolicy(
            idleInterval: nil, unsavedChangeLimit: nil, saveOnClose: true, groupingInterval: 0)
        let (_, document) = try await Self.editedDocument(in: fixture, on: injector, autosave: saveOnClose)
        let error = try await #require(throws: DocumentError.self) { try await document.save() }
        #expect(error.code == .save)
        let cause = try #require(error.cause as? SaveError)
        #expect(cause.code == (code == .noSpace ? .noSpace : .permissionDenied))
        #expect(await document.state == .savingError)
        #expect(try fixture.text(at: file) == "saved")
        #expect(Disk.leftovers(in: fixture.documents).isEmpty, "the torn temporary file was removed")

        // Closing does not lose the edits, even though the save on close fails.
        try await document.close()
        #expect(await document.state == [.savingError, .closed])
        #expect(injector.stepCount == 7, "the save on close was attempted")
        #expect(try fixture.text(at: file) == "saved")
        let reopened = try await fixture.library().open(document.id, as: TextDocument.self)
        #expect(await reopened.model.text == "saved, then edited")
    }

    // Root may write anywhere: the test means something only for an ordinary user.
    @Test(.enabled(if: getuid() != 0, "root ignores directory permissions"))
    func aReallyReadOnlyDirectoryGivesASavingError() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("text"))
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: fixture.documents.path)
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: fixture.documents.path)
        }
        let error = try await #require(throws: DocumentError.self) { try await document.save() }
        #expect((error.cause as? SaveError)?.code == .permissionDenied)
        #expect(await document.state == .savingError)
    }

    @Test func aPackageIsRewrittenInFullAfterAFailedSave() async throws {
        // Steps 0-15 create the package; 16 creates the staging directory of the next save, 17 writes the new
        // text.txt there, 18 is its fsync.
        let library = try fixture.library(
            fileSystem: FaultInjectingFileSystem(faults: [.fail(atStep: 18, with: .ioError)]))
        let document = try await library.create(PagesDocument.self, named: "Album")
        try await document.edit(.setText("cover"))
        try await document.edit(.putImage(name: "a.png", bytes: Data(repeating: 1, count: 100)))
        try await document.edit(.putImage(name: "b.png", bytes: Data(repeating: 2, count: 100)))
        let first = try await document.save()
        #expect(first.filesWritten == 4)

        try await document.edit(.setText("a new cover"))
        let error = try await #require(throws: DocumentError.self) { try await document.save() }
        #expect((error.cause as? SaveError)?.code == .syncFailed)
        #expect(await document.state == .savingError)

        let rewrite = try await document.save()
        #expect(rewrite.filesWritten == 4, "after a failed save nothing on disk is trusted")
        #expect(await document.state == .normal)
        try await document.edit(.setText("the newest cover"))
        let incremental = try await document.save()
        #expect(incremental.filesWritten == 1, "then saves are incremental again")
    }

    // MARK: Crashes

    /// The steps of the second save of ``editedDocument(in:on:autosave:)``, from a dry run in a fixture of its own.
    static func flatSaveSteps() async throws -> [FaultInjectingFileSystem.Step] {
        let fixture = try LibraryFixture()
        let injector = FaultInjectingFileSystem()
        let (_, document) = try await editedDocument(in: fixture, on: injector)
        injector.resetRecord()
        try await document.save()
        withExtendedLifetime(fixture) {}
        return injector.steps
    }

    @Test func aDocumentSaveCrashedAtAnyStepLosesNothing() async throws {
        let steps = try await Self.flatSaveSteps()
        #expect(steps.map(\.kind) == [.writeFile, .synchronizeFile, .rename, .synchronizeDirectory])
        let commit = try #require(steps.firstIndex { $0.kind == .rename })
        for (index, step) in steps.enumerated() {
            var faults: [FaultInjectingFileSystem.Fault] = [.crash(atStep: 4 + index)]
            if step.kind == .writeFile { faults.append(.crash(atStep: 4 + index, writtenPrefix: step.byteCount / 2)) }
            for fault in faults {
                let context = "crash at step \(index) (\(step.kind)), torn: \(fault.writtenPrefix != nil)"
                let fixture = try LibraryFixture()
                let (_, document) = try await Self.editedDocument(
                    in: fixture, on: FaultInjectingFileSystem(faults: [fault]))
                let error = try await #require(throws: DocumentError.self, "\(context)") { try await document.save() }
                #expect((error.cause as? SaveError)?.code == .crashed, "\(context)")
                #expect(await document.state == .savingError, "\(context)")

                // Restart: a new library on the real file system.
                let library = try fixture.library()
                let file = fixture.documentFile("Notes.txt")
                #expect(try fixture.text(at: file) == (index <= commit ? "saved" : "saved, then edited"), "\(context)")
                let reopened = try await library.open(document.id, as: TextDocument.self)
                #expect(await reopened.model.text == "saved, then edited", "\(context)")
                #expect(fixture.documentNames == ["Notes.txt"], "opening cleaned the leftovers: \(context)")
                #expect(try library.log(of: document.id).filter(\.isBaseline).isEmpty, "\(context)")
                #expect(try library.store.heads(of: document.id).count == 1, "\(context)")
                try await reopened.save()
                #expect(try fixture.text(at: file) == "saved, then edited", "\(context)")
            }
        }
    }

    @Test func aPackageDocumentSaveCrashedAtAnyStepLosesNothing() async throws {
        func prepare(_ fixture: LibraryFixture, _ fileSystem: any FileSystem) async throws -> Document<PagesDocument> {
            let library = try fixture.library(fileSystem: fileSystem)
            let document = try await library.create(PagesDocument.self, named: "Album")
            try await document.edit(.setText("first"))
            try await document.edit(.putImage(name: "a.png", bytes: Data(repeating: 1, count: 64)))
            try await document.edit(.putImage(name: "old.png", bytes: Data(repeating: 3, count: 64)))
            try await document.save()
            try await document.edit(.setText("second, longer"))
            try await document.edit(.removeImage(name: "old.png"))
            try await document.edit(.putImage(name: "new.png", bytes: Data(repeating: 2, count: 64)))
            return document
        }
        let dryRun = FaultInjectingFileSystem()
        let dryRunFixture = try LibraryFixture()
        let dryRunDocument = try await prepare(dryRunFixture, dryRun)
        let firstSave = dryRun.stepCount
        let expected = try await dryRunDocument.save()
        #expect(expected.filesWritten == 3)
        let saveSteps = dryRun.stepCount - firstSave
        withExtendedLifetime(dryRunFixture) {}
        #expect(saveSteps > 10)
        let new = await dryRunDocument.model
        for step in 0..<saveSteps {
            let fixture = try LibraryFixture()
            let document = try await prepare(
                fixture, FaultInjectingFileSystem(faults: [.crash(atStep: firstSave + step)]))
            let error = try await #require(throws: DocumentError.self, "step \(step)") { try await document.save() }
            #expect((error.cause as? SaveError)?.code == .crashed, "step \(step)")

            let library = try fixture.library()
            let reopened = try await library.open(document.id, as: PagesDocument.self)
            #expect(await reopened.model == new, "crash at step \(step)")
            let package = fixture.documentFile("Album.folio-pages")
            #expect(Disk.leftovers(in: package).isEmpty, "step \(step)")
            #expect(Disk.leftovers(in: fixture.documents).isEmpty, "step \(step)")
            #expect(try library.log(of: document.id).filter(\.isBaseline).isEmpty, "step \(step)")
            let onDisk = try PagesDocument(contents: try SavePipeline().readPackage(at: package).asContents)
            #expect(onDisk.text == "first" || onDisk == new, "crash at step \(step): the old or the new package")
            try await reopened.save()
            #expect(
                try PagesDocument(contents: try SavePipeline().readPackage(at: package).asContents) == new,
                "step \(step)")
        }
    }
}

extension FilePackage {
    var asContents: DocumentContents { .package(self) }
}
