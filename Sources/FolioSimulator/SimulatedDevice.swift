import FolioConflicts
import FolioCore
import FolioDocuments
import FolioFiles
import FolioModels
import FolioStore
import FolioTestDoubles
import Foundation

/// One simulated device: its own library on disk, its own clock (with skew), identities and file I/O, and the
/// documents its app has open.
///
/// Like a notes app, the device keeps every document of its library open (those that arrive by sync included)
/// unless a `close` step closed it. A crash drops everything in memory; a restart opens the library again from
/// what is on disk.
final class SimulatedDevice {
    let name: String
    let key: DeviceKey
    let device: Device
    let root: URL
    let clock: ManualClock
    let skew: Int64
    let identifiers: SeededIdentifierSource
    let policy: ConflictPolicy
    private(set) var fileSystem: FaultInjectingFileSystem
    private(set) var library: DocumentLibrary?
    /// Open documents by identity.
    private(set) var handles: [DocumentID: any SimulatedDocument] = [:]
    /// Documents a `close` step closed, with what they showed then.
    private(set) var closed: [DocumentID: DocumentObservation] = [:]
    var isOnline = true

    /// Saves after 5 s without edits and on close; every edit is its own change, as the scenario format says.
    static let autosave = AutosavePolicy(
        idleInterval: 5_000, unsavedChangeLimit: nil, saveOnClose: true, groupingInterval: 0)

    /// The file system the device's file I/O goes to, through its fault injector.
    let baseFileSystem: any FileSystem
    /// Where the device's library does its work (the run's, see `Simulator`), if anywhere in particular.
    let executor: BlockingWorkExecutor?

    init(
        name: String, key: DeviceKey, root: URL, clock: ManualClock, skew: Int64, identifierSeed: UInt64,
        policy: ConflictPolicy,
        fileSystem: any FileSystem, executor: BlockingWorkExecutor? = nil
    ) {
        self.executor = executor
        self.name = name
        self.key = key
        device = key.device(named: name)
        self.root = root
        self.clock = clock
        self.skew = skew
        self.policy = policy
        identifiers = SeededIdentifierSource(seed: identifierSeed)
        baseFileSystem = fileSystem
        self.fileSystem = FaultInjectingFileSystem(wrapping: fileSystem)
    }

    /// The device's file I/O for one run of its process: the simulator's file system, with crashes injected (the
    /// store is opened with `Durability.off`, as a simulated crash kills the process, not the machine).
    func freshFileSystem() -> FaultInjectingFileSystem {
        FaultInjectingFileSystem(wrapping: baseFileSystem)
    }

    var isRunning: Bool { library != nil }

    /// Starts the device's process: opens its library (recovering what a crash left) and its documents.
    func start() async throws {
        fileSystem = freshFileSystem()
        library = try DocumentLibrary(
            // Simulated devices act for nobody: saying so spares the library reading its store for a person.
            at: root, key: key, deviceName: name, person: "", types: .builtIn, clock: clock, identifiers: identifiers,
            fileSystem: fileSystem, durability: .off, access: .exclusive, autosave: Self.autosave,
            conflictPolicy: policy, backgroundWork: false, executor: executor)
        _ = try await openNewDocuments()
    }

    /// Whether a `close` step closed `id`.
    func isClosed(_ id: DocumentID) -> Bool { closed[id] != nil }

    /// Takes a document this device just created.
    func adopt(_ handle: any SimulatedDocument) {
        handles[handle.id] = handle
        closed[handle.id] = nil
    }

    /// The process dies: nothing in memory survives; what the disk holds stays, the store's write-ahead log too.
    func kill() {
        // Work of the dead process may still refer to its documents, the library and the store (a job queued when it
        // died): it must neither write to the disk nor hold the store's lock, which the killed process's end
        // releases. Failing to close the store at once would only leave it to close when that work is done.
        fileSystem.crash()
        if let store = library?.store { try? CrashSimulation.kill(store) }
        handles = [:]
        closed = [:]
        library = nil
    }

    func runningLibrary() throws(SimulationError) -> DocumentLibrary {
        guard let library else { throw SimulationError.step("\(name) is not running (it crashed; restart it first)") }
        return library
    }

    /// Opens the documents of the library that are neither open nor closed by a step (new ones, arrived by sync).
    ///
    /// - Returns: the names of the documents opened.
    func openNewDocuments() async throws -> [String] {
        guard let library else { return [] }
        var opened: [String] = []
        for info in try await library.documents() where handles[info.id] == nil && closed[info.id] == nil {
            handles[info.id] = try await Self.open(info, in: library)
            opened.append(info.displayName)
        }
        return opened
    }

    /// Opens one document as its built-in model.
    static func open(_ info: DocumentInfo, in library: DocumentLibrary) async throws -> any SimulatedDocument {
        switch info.typeIdentifier {
        case TextDocument.documentType.identifier:
            DocumentHandle(try await library.open(info.id, as: TextDocument.self))
        case RecordsDocument.documentType.identifier:
            DocumentHandle(try await library.open(info.id, as: RecordsDocument.self))
        case PagesDocument.documentType.identifier:
            DocumentHandle(try await library.open(info.id, as: PagesDocument.self))
        default:
            throw DocumentError(
                .wrongType,
                "\(info.displayName) is a \(info.typeIdentifier) document, which the simulator does not know")
        }
    }

    /// The open handle of `id`, opening it first if a `close` step closed it (an app opens a document to edit it).
    func handle(_ id: DocumentID) async throws(SimulationError) -> any SimulatedDocument {
        if let handle = handles[id] { return handle }
        let library = try runningLibrary()
        let info: DocumentInfo?
        do { info = try await library.info(of: id) } catch { throw .document(error) }
        guard let info else { throw SimulationError.step("\(name) does not have this document yet") }
        do {
            let handle = try await Self.open(info, in: library)
            handles[id] = handle
            closed[id] = nil
            return handle
        } catch {
            throw .document(error)
        }
    }

    /// Closes `id` by a `close` step, remembering what it showed.
    func close(_ id: DocumentID) async throws(SimulationError) {
        guard let handle = handles[id] else { return }
        do {
            var last = try await handle.observe()
            try await handle.close()
            last.state = (last.state.subtracting(.inConflict)).union(.closed)
            last.conflictVersions = 0
            closed[id] = last
        } catch {
            throw .document(error)
        }
        handles[id] = nil
    }

    /// What the device shows of `id`: the open document, or what it showed when closed; `nil` when it does not
    /// hold the document.
    func observe(_ id: DocumentID) async throws(SimulationError) -> DocumentObservation? {
        if let handle = handles[id] {
            do { return try await handle.observe() } catch { throw .document(error) }
        }
        return closed[id]
    }

    /// Moves the device's clock to the simulated time (plus its skew) and runs what became due (autosaves).
    func setTime(_ simulated: Int64) {
        clock.set(Timestamp(millisecondsSince1970: simulated + skew))
    }

    /// Runs every open document's due work (autosave), in identity order.
    func runDueWork() async throws(SimulationError) {
        for id in handles.keys.sorted() {
            do { try await handles[id]!.runDueWork() } catch { throw .document(error) }
        }
    }

    /// Arms a crash at one of the next file-system steps (a save's), torn if it is a write.
    func armCrash(within steps: Int, using generator: inout SplitMix64) {
        let step = fileSystem.stepCount + Int(generator.next() % UInt64(max(steps, 1)))
        let prefix = Int(generator.next() % 64)
        fileSystem.inject(.crash(atStep: step, writtenPrefix: prefix))
    }
}
