import FolioConflicts
import FolioCore
import FolioStore
import Foundation
import Synchronization

/// A directory of documents with their change logs: the store in `.folio/`, each document's file in
/// `Documents/` (on this device) or `Shared/` (the synced container).
///
/// Creating, renaming, moving, deleting, restoring and importing are logged changes; listing folds them. Open a
/// document with ``open(_:as:)`` to read and edit it.
public final class DocumentLibrary: Sendable {
    /// The library's directory.
    public let root: URL
    /// The change logs of every document.
    public let store: ChangeLogStore
    /// The document types the library knows: the built-in ones (`DocumentTypeRegistry.builtIn`), the app's, and
    /// those of the models documents were created or opened as.
    public var types: DocumentTypeRegistry { typeRegistry.withLock { $0 } }
    private let typeRegistry: Mutex<DocumentTypeRegistry>
    /// When documents save by themselves and how edits are grouped.
    public let autosave: AutosavePolicy
    /// How many live syncs run with the library (see ``syncsLive``).
    private let liveSyncs = Atomic<Int>(0)

    /// Whether the library syncs live (`startSyncing(with:token:)` runs): then open documents commit their edits
    /// ``AutosavePolicy/liveCommitDelay`` after they are made, so other devices see them before their undo group ends.
    public var syncsLive: Bool { liveSyncs.load(ordering: .relaxed) > 0 }

    /// Notes that a live sync of the library started (`true`) or stopped (`false`).
    package func noteLiveSync(running: Bool) {
        liveSyncs.add(running ? 1 : -1, ordering: .relaxed)
    }
    /// How conflicts are settled when they appear: the library-wide default, and overrides by type identifier.
    public let conflictPolicy: ConflictPolicy
    /// Package members (a pages document's images, a package's files) of at least this many bytes are stored and
    /// synced as blobs (see the Attachments article of the Folio documentation): a change refers to each by hash and
    /// size, the store keeps each once, and sync sends it only to a peer that lacks it. `nil`: changes carry every
    /// byte themselves.
    public let blobThreshold: Int?
    /// The default ``blobThreshold``: 4 KiB.
    public static let defaultBlobThreshold = 4_096

    /// Whether open documents run their due work (group commits, autosaves) on a background timer. Off when the
    /// clock is injected: then the owner calls ``Document/runDueWork()``.
    public let runsBackgroundWork: Bool

    let clock: any WallClock
    let identifiers: any IdentifierSource
    let pipeline: SavePipeline
    /// What the log says of each document, with the heads it was read at: a document's log is what its heads
    /// descend from, so the same heads mean the same info, and listing the documents reads only the ones that moved.
    let catalogCache = Mutex<[DocumentID: (heads: [ChangeHash], info: DocumentInfo?)]>([:])
    /// The containers' directories, and the root's standardized path: URL arithmetic is not free, and every save
    /// and file check needs them.
    private let localDirectory: URL
    private let sharedDirectory: URL
    private let standardizedRootPath: String
    /// Document file URLs already made, by container and file name (see ``fileURL(for:)``).
    let fileURLs = Mutex<[FileKey: URL]>([:])
    /// The file name each document was last given that its saved-file record may not show yet (its path relative
    /// to the root), so that two documents saving at once (two new "Untitled" documents autosaved by one timer
    /// tick) are never given one file: a name is chosen and claimed under this lock, and the saved-file record
    /// that claims it on disk is written before the first save writes the file.
    let fileNameClaims = Mutex<[DocumentID: String]>([:])
    /// The open documents, one ``Document`` each.
    let openDocuments = OpenDocuments()
    /// Held while a document's file moves (``moveFile(of:from:to:)``) and while a local copy is removed
    /// (``removeLocalCopy(of:)``), so that a move racing a removal either moves the file before the removal reads
    /// where it is or finds it gone, and no moved file or record outlives the removal.
    let fileMoves = Mutex(())
    /// Where open documents' presence goes: the live sync of the moment (see `DocumentLibrary+Presence.swift`).
    let presenceOutlet = PresenceOutlet()

    struct FileKey: Hashable {
        var container: DocumentContainer
        var name: String
    }

    /// The file I/O every save and read goes through.
    public var fileSystem: any FileSystem { pipeline.fileSystem }
    /// The one serial executor the library's blocking work and its documents run on, when the library was given
    /// one; `nil` by default, when each open document runs on a queue of its own (so that documents work in
    /// parallel) and each of the library's calls on a queue made for it.
    ///
    /// Given one, a program that drives the library from a task preferring the same executor
    /// (`withTaskExecutorPreference(_:operation:)`) awaits documents without moving between queues: an awaited call
    /// runs on the caller's queue, and wakes no other thread. The simulator runs each scenario this way. Work the
    /// executor runs blocks it (SQLite, fsync), and everything of the library waits its turn there: a live sync's
    /// connection and its handling of what arrives (`startSyncing`), its syncs, every document. Only a program that
    /// waits for that work anyway gains.
    public let workExecutor: BlockingWorkExecutor?
    /// The device this library edits as.
    public var device: Device { store.localDevice }

    /// Opens (or creates) the library at `root`.
    ///
    /// - Parameters:
    ///   - root: the library directory; created if absent.
    ///   - key: this device's signing key, which makes its identity (see `DeviceKey`). By default, the key the
    ///     library's store keeps from an earlier run, or a new random one for a new library: a library remembers
    ///     its device.
    ///   - deviceName: this device's display name, such as "Anna's iPad"; by default the one the store keeps, or
    ///     none.
    ///   - person: the person this device acts for (`Device.person`), as the app names its signed-in user; by
    ///     default the one the store keeps, or none. Peers learn it with the device's name; a server that knows the
    ///     user of the device's token passes that user on instead.
    ///   - types: the app's document types, for file names and imports by file extension, on top of the built-in
    ///     ones (an app type with a built-in one's identifier replaces it).
    ///   - clock: the wall clock (inject a `ManualClock` for tests and simulations).
    ///   - identifiers: where new document identities come from.
    ///   - fileSystem: the file I/O: documents' files, the library's directories, and the store's header check and
    ///     first image (inject `FaultInjectingFileSystem`, in FolioTesting, to test crashes).
    ///   - durability: how the store's commits reach the disk.
    ///   - access: whether other connections may use the store's file while the library is open (the default) or
    ///     the library is its only user (cheaper; see `StoreAccess`).
    ///   - autosave: the autosave and grouping policy of the documents opened from this library.
    ///   - conflictPolicy: how competing versions are settled (by default a person is asked).
    ///   - backgroundWork: whether documents commit and autosave on a background timer; by default only with the
    ///     system clock.
    ///   - executor: where the library's blocking work runs (see ``workExecutor``): by default each open document
    ///     on a queue of its own, and each of the library's calls on a queue made for it.
    ///   - blobThreshold: the size from which package members are blobs (see ``blobThreshold``); at least 64.
    /// - Throws: ``DocumentError`` `.store` when the store cannot be opened, `.save` when the directories cannot
    ///   be created.
    public init(
        at root: URL, key: DeviceKey? = nil, deviceName: String? = nil, person: String? = nil,
        types: DocumentTypeRegistry = DocumentTypeRegistry(),
        clock: any WallClock = SystemClock(), identifiers: any IdentifierSource = RandomIdentifierSource(),
        fileSystem: any FileSystem = PosixFileSystem(), durability: Durability = .normal, access: StoreAccess = .shared,
        autosave: AutosavePolicy = .standard, conflictPolicy: ConflictPolicy = ConflictPolicy(),
        backgroundWork: Bool? = nil, executor: BlockingWorkExecutor? = nil,
        blobThreshold: Int? = DocumentLibrary.defaultBlobThreshold
    ) throws {
        // Below a placeholder's size, a blob would cost more than the bytes it stands for.
        self.blobThreshold = blobThreshold.map { max($0, 64) }
        self.root = root
        workExecutor = executor
        self.conflictPolicy = conflictPolicy
        var registry = DocumentTypeRegistry.builtIn
        for type in types.types { registry.register(type) }
        typeRegistry = Mutex(registry)
        self.autosave = autosave
        self.clock = clock
        self.identifiers = identifiers
        self.runsBackgroundWork = backgroundWork ?? (clock is SystemClock)
        pipeline = SavePipeline(fileSystem: fileSystem)
        localDirectory = Self.directory(of: .local, in: root)
        sharedDirectory = Self.directory(of: .shared, in: root)
        standardizedRootPath = root.standardizedFileURL.path
        for directory in [
            root, root.appendingPathComponent(".folio", isDirectory: true), localDirectory, sharedDirectory,
        ] {
            do {
                try fileSystem.createDirectoryDurably(at: directory)
            } catch {
                throw DocumentError(.save, "cannot create the library directory \(directory.path)", cause: error)
            }
        }
        let storeURL = root.appendingPathComponent(".folio/store.sqlite", isDirectory: false)
        do {
            let kept =
                key == nil || deviceName == nil || person == nil
                ? try DeviceRegistry.localIdentity(ofStoreAt: storeURL) : nil
            let key = key ?? kept?.key ?? DeviceKey()
            let name = deviceName ?? (kept?.key.id == key.id ? kept?.name : nil) ?? ""
            let person = person ?? (kept?.key.id == key.id ? kept?.person : nil) ?? ""
            store = try ChangeLogStore(
                at: storeURL, key: key, deviceName: name, person: person, clock: clock, durability: durability,
                access: access, fileSystem: fileSystem)
        } catch {
            throw DocumentError.store(error, "opening the library's store")
        }
    }

    /// The directory of a container: `Documents/` or `Shared/`.
    public func directory(of container: DocumentContainer) -> URL {
        container == .local ? localDirectory : sharedDirectory
    }

    static func directory(of container: DocumentContainer, in root: URL) -> URL {
        root.appendingPathComponent(directoryName(of: container), isDirectory: true)
    }

    /// The name of a container's directory in the library's: `Documents` or `Shared`.
    static func directoryName(of container: DocumentContainer) -> String {
        container == .local ? "Documents" : "Shared"
    }

    // MARK: Creating and opening

    /// Creates a document of `Model`'s type named `name` in `container`, optionally with initial contents (recorded
    /// as a baseline change right after the creation), and opens it.
    ///
    /// A document created in `DocumentContainer.local` (the default) stays on this device: no sync sends it until
    /// it is moved to `DocumentContainer.shared` (``move(_:to:)``). Create it in `.shared` to sync it.
    ///
    /// - Throws: ``DocumentError`` `.invalidName` for a name the library does not give a document (empty, over 200
    ///   bytes, with a `/`, a control character or line break, a leading `.` or surrounding spaces), `.store`.
    public func create<Model: DocumentModel>(
        _ model: Model.Type, named name: String, in container: DocumentContainer = .local, contents: Model? = nil
    ) async throws -> Document<Model> {
        try Self.validate(name: name)
        let id = DocumentID(using: identifiers)
        try await offThePool {
            try self.record(creationOf: id, type: model, named: name, in: container, contents: contents)
        }
        return try await open(id, as: model)
    }

    /// Adds `type` to ``types`` unless a type with its identifier is there: a model's own declaration names its
    /// documents' files when the app did not register it.
    func register(_ type: DocumentType) {
        typeRegistry.withLock { registry in
            if registry.type(identifier: type.identifier) == nil { registry.register(type) }
        }
    }

    /// Runs `work`, which blocks on SQLite or the disk, on a queue of its own (or the library's ``workExecutor``)
    /// instead of the cooperative pool.
    package func offThePool<Result: Sendable, Failure: Error>(
        _ work: @Sendable () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let executor = workExecutor ?? BlockingWorkExecutor(label: "folio.library")
        defer { withExtendedLifetime(executor) {} }
        return try await withTaskExecutorPreference(executor) { () async throws(Failure) -> Result in try await work() }
    }

    /// Logs the creation of document `id` (and its initial contents as a baseline).
    func record<Model: DocumentModel>(
        creationOf id: DocumentID, type model: Model.Type, named name: String, in container: DocumentContainer,
        contents: Model?
    ) throws(DocumentError) {
        var written = [
            EncodedKind(.lifecycle(.create(name: name, type: Model.documentType.identifier, container: container)))
        ]
        if let contents { written.append(baselineKind(contents.contents(), of: Model.self)) }
        do {
            // A document created in the local container is unpublished in the transaction that creates it.
            try append(written, to: id, unpublished: container == .local ? true : nil)
        } catch {
            throw .store(error, "creating \(name)")
        }
    }

    /// Opens the document `id` as a `Model`: the model is rebuilt from the latest checkpoint plus the changes after
    /// it, leftovers of an interrupted save are cleaned, and a file changed on disk by another program is recorded
    /// as a baseline change.
    ///
    /// - Throws: ``DocumentError`` `.notFound`, `.wrongType` (the document is of another type), `.store`, `.save`
    ///   when the leftovers of an interrupted save cannot be cleaned or the file cannot be read, `.invalidContents`
    ///   when a file changed by another program is not a valid document.
    ///
    /// A document that is open already is not read again: every opening gives the same ``Document``, until it
    /// closes (closing it closes it for every part of the app that holds it).
    public func open<Model: DocumentModel>(_ id: DocumentID, as model: Model.Type) async throws -> Document<Model> {
        let document = try await openDocuments.document(id, on: workExecutor) {
            // Opening reads the log and may replay a long history: off the cooperative pool.
            try await self.offThePool {
                guard let info = try self.catalogInfo(of: id) else {
                    throw DocumentError(.notFound, "no document \(id) in the library at \(self.root.path)")
                }
                guard info.typeIdentifier == Model.documentType.identifier else {
                    throw DocumentError(
                        .wrongType,
                        "\(info.displayName) is a \(info.typeIdentifier) document, not \(Model.documentType.identifier)"
                    )
                }
                return try await Document<Model>.open(info, in: self)
            }
        }
        guard let document = document as? Document<Model> else {
            throw DocumentError(.wrongType, "document \(id) is open as another model than \(Model.self)")
        }
        register(Model.documentType)
        return document
    }

    /// Opens the document named `name` (not deleted) as a `Model`; of several with that name, the one created first
    /// (open the others by identity, from ``documents(includingDeleted:)``).
    ///
    /// - Throws: ``DocumentError`` `.notFound`, `.wrongType`, `.store`.
    public func open<Model: DocumentModel>(named name: String, as model: Model.Type) async throws -> Document<Model> {
        let namesakes = try await documents().filter { $0.displayName == name }
        guard let info = namesakes.min(by: { ($0.creationDate, $0.id) < ($1.creationDate, $1.id) }) else {
            throw DocumentError(.notFound, "no document named '\(name)' in the library at \(root.path)")
        }
        return try await open(info.id, as: model)
    }

    /// The path of `url` relative to the library's directory, as saved-file records keep it.
    func relativePath(of url: URL) -> String {
        let rootPath = standardizedRootPath
        let path = url.standardizedFileURL.path
        return path.hasPrefix(rootPath + "/") ? String(path.dropFirst(rootPath.count + 1)) : path
    }

    /// The URL of a path relative to the library's directory (what ``relativePath(of:)`` made). With a directory
    /// hint, Foundation does not look at the disk to make it; a package's URL has no trailing slash.
    func url(ofRelativePath path: String) -> URL {
        root.appendingPathComponent(path, isDirectory: false)
    }

    /// Refuses names that the library does not give a document: empty or over 200 bytes, with a `/`, a leading `.`
    /// or surrounding spaces, or with characters that cannot be shown on one line (control characters such as NUL,
    /// tab or a line break, and line or paragraph separators). Any other name is kept as given; the file name made
    /// from it is made safe by ``DocumentFileName`` (as a name that arrives from a peer, which is never refused).
    static func validate(name: String) throws(DocumentError) {
        guard !name.isEmpty, name.utf8.count <= 200 else {
            throw DocumentError(.invalidName, "a document name must be 1 to 200 bytes long")
        }
        // Scalars, not characters: a `/` or a `.` followed by a combining mark is still one to the file system.
        let isRefused = { (scalar: Unicode.Scalar) -> Bool in
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: true
            default: scalar == "/"
            }
        }
        guard !name.unicodeScalars.contains(where: isRefused), name.unicodeScalars.first != ".",
            name.trimmingCharacters(in: .whitespaces) == name
        else {
            throw DocumentError(
                .invalidName,
                "'\(name.debugDescription.dropFirst().dropLast())' cannot be a document name: no '/', control characters, "
                    + "line breaks, leading '.' or surrounding spaces")
        }
    }
}

extension DocumentLibrary {
    /// Commits the open group of every open document (``Document/commit()``), so that what the app edited is in
    /// the log: `sync(through:)` calls it first, so that a sync sends every edit made before it.
    ///
    /// - Throws: ``DocumentError`` `.store`, the first a document met; the others are committed all the same.
    public func commitOpenDocuments() async throws {
        try await forEach(openDocuments.all()) { try $0.commit() }
    }

    /// Brings the open documents among `ids` up to date with the log, as ``Document/refresh()`` does: their
    /// contents and state change, announced on their streams. `sync(through:)` calls it with what a sync brought;
    /// an app that puts changes in the store by other means calls it with the documents they touched.
    ///
    /// - Throws: ``DocumentError`` `.store`, the first a document met; the others are brought up to date all the
    ///   same, and one that failed catches up before its next edit.
    public func refreshOpenDocuments(_ ids: [DocumentID]) async throws {
        try await forEach(await openDocuments.documents(among: ids)) { _ = try $0.refresh() }
    }

    /// Runs `work` on each document, in its isolation; a document closed since it was listed is passed over.
    ///
    /// - Throws: the first error `work` threw, once every document had its turn.
    private func forEach(
        _ documents: [any OpenDocument], _ work: @Sendable (isolated any OpenDocument) throws -> Void
    ) async throws {
        var firstError: (any Error)?
        for document in documents {
            do { try await work(document) } catch let error as DocumentError where error.code == .closed {
                // Closed since it was listed: nothing to do.
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw firstError }
    }
}
