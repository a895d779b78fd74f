import FolioConflicts
import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioTesting
import Foundation

/// A document library in its own temporary directory, with a manual clock, seeded identities and no background
/// work, so that every run of a test makes the same identities and sees the same times.
///
/// The library's directories are made up front, and its store before its first opening, so that opening a library
/// makes no file-system step (the store's first image is one) and a
/// ``FaultInjectingFileSystem`` counts only the steps of what the test does. ``library(fileSystem:autosave:)`` can
/// be called again to reopen the same library, as a restarted process would.
final class LibraryFixture: Sendable {
    let directory: TemporaryDirectory
    let clock: ManualClock
    let key: DeviceKey
    let device: Device
    let identifiers: SeededIdentifierSource

    /// The library's directory.
    var root: URL { directory.url.appendingPathComponent("Library", isDirectory: true) }
    /// Where local documents' files go.
    var documents: URL { root.appendingPathComponent("Documents", isDirectory: true) }
    /// Where shared documents' files go.
    var shared: URL { root.appendingPathComponent("Shared", isDirectory: true) }

    /// 2026-01-01T00:00:00Z.
    static let start = Timestamp(millisecondsSince1970: 1_767_225_600_000)

    init(seed: UInt64 = 1) throws {
        directory = try TemporaryDirectory()
        clock = ManualClock(start: Self.start)
        identifiers = SeededIdentifierSource(seed: seed)
        key = DeviceKey(using: SeededIdentifierSource(seed: seed ^ 0xD0C5))
        device = key.device(named: "Test Device")
        for url in [root, root.appendingPathComponent(".folio"), documents, shared] {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
    }

    /// Opens (or reopens) the library.
    func library(fileSystem: any FileSystem = PosixFileSystem(), autosave: AutosavePolicy = .manual) throws
        -> DocumentLibrary
    {
        let store = root.appendingPathComponent(".folio/store.sqlite")
        if try PosixFileSystem().itemKind(at: store) == .absent {
            try ChangeLogStore(at: store, key: key, deviceName: device.name, clock: clock).close()
        }
        return try DocumentLibrary(
            at: root, key: key, deviceName: device.name,
            types: DocumentTypeRegistry([
                TextDocument.documentType, RecordsDocument.documentType, PagesDocument.documentType,
            ]),
            clock: clock, identifiers: identifiers, fileSystem: fileSystem, autosave: autosave, backgroundWork: false)
    }

    /// The URL of a local document's file named `name`.
    func documentFile(_ name: String) -> URL {
        documents.appendingPathComponent(name, isDirectory: false)
    }

    /// The text of the file at `url`, read by the test's own means.
    func text(at url: URL) throws -> String {
        String(decoding: try Data(contentsOf: url), as: UTF8.self)
    }

    /// The names in the local documents' directory, leftovers included.
    var documentNames: [String] { Disk.names(in: documents) }
}

extension LibraryFixture {
    /// The library as a co-editing app opens it: the `merge` policy, undo groups of a second, each edit committed
    /// `liveCommitDelay` after it is made, syncing live (as `startSyncing` notes) unless `live` is false.
    func coEditingLibrary(liveCommitDelay: Int64? = 0, live: Bool = true) throws -> DocumentLibrary {
        let library = try DocumentLibrary(
            at: root, key: key, deviceName: device.name, clock: clock, identifiers: identifiers,
            autosave: AutosavePolicy(idleInterval: nil, unsavedChangeLimit: nil, liveCommitDelay: liveCommitDelay),
            conflictPolicy: ConflictPolicy(default: .merge), backgroundWork: false)
        if live { library.noteLiveSync(running: true) }
        return library
    }
}

extension Change {
    /// Whether the change is a baseline (a whole snapshot).
    var isBaseline: Bool {
        if case .baseline = kind { return true }
        return false
    }

    /// The intent of an edit; `nil` for other kinds.
    var editIntent: Edit.Intent? {
        if case .edit(let edit) = kind { return edit.intent }
        return nil
    }

    /// The operations of an edit, decoded as `Operation`s; empty for other kinds.
    func operations<Operation: DocumentOperation>(as type: Operation.Type) throws -> [Operation] {
        guard case .edit(let edit) = kind else { return [] }
        return try Operation.decodeGroup(edit.operations)
    }

    /// The contents a baseline holds; `nil` for other kinds.
    var baselineContents: DocumentContents? {
        guard case .baseline(let encoded) = kind else { return nil }
        return try? DocumentContents(decoding: encoded)
    }
}

extension DocumentLibrary {
    /// Every change of document `id`, in causal order.
    func log(of id: DocumentID) throws -> [Change] {
        try store.changes(of: id)
    }

    /// The edit changes of document `id` (plain edits, undos and redos), in causal order.
    func edits(of id: DocumentID) throws -> [Change] {
        try log(of: id).filter { $0.editIntent != nil }
    }
}

extension Document {
    /// Closes the document and returns every state it went through since it was opened.
    func closeCollectingStates() async throws -> [DocumentState] {
        try close()
        var states: [DocumentState] = []
        for await state in stateChanges { states.append(state) }
        return states
    }
}

/// Each side ingests what the other has of document `id` and lacks, and the blobs they refer to, as a sync would.
func exchange(_ first: DocumentLibrary, _ second: DocumentLibrary, _ id: DocumentID) throws {
    try second.store.ingest(trusting: first.store.changes(of: id, since: second.store.vector(of: id)))
    try first.store.ingest(trusting: second.store.changes(of: id, since: first.store.vector(of: id)))
    try second.store.storeBlobs(Array(first.store.blobs(second.store.missingBlobs()).values))
    try first.store.storeBlobs(Array(second.store.blobs(first.store.missingBlobs()).values))
}
