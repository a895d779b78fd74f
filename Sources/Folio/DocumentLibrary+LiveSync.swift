import FolioClient
import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioSync
import Foundation
import Logging
import Synchronization

extension DocumentLibrary {
    /// Starts syncing with the library's copy on a Folio server (`folio serve`), and keeps at it until
    /// ``LibrarySync/stop()``: one connection, local commits sent as they happen, other devices' changes applied as
    /// the server passes them on (open documents show them at once, and files follow renames, moves and deletes),
    /// and after any failure a new connection after a capped, jittered exponential backoff.
    ///
    /// Edits reach the server once their document commits them: while the library syncs live, as they are made (or
    /// within `AutosavePolicy.liveCommitDelay`), the undo group going on for its `groupingInterval`; also at the end
    /// of an undo group, a save, or `commitOpenDocuments()`.
    ///
    /// - Parameters:
    ///   - url: the library's address on the server, `ws://HOST:PORT/v1/libraries/NAME` (as `folio serve token
    ///     create` prints it).
    ///   - token: the bearer token that grants the library.
    ///   - backoff: the waits between connection attempts.
    ///   - allowsCleartext: whether the token may go unencrypted (`ws://`) to a host other than this machine; off by
    ///     default (see `ServerEndpoint`): use `wss://` beyond one machine.
    /// - Returns: the running sync: its ``LibrarySync/events`` and ``LibrarySync/stop()``.
    /// - Throws: `SyncError` `.malformed` when the address or token is not usable, or when the address is `ws://` to
    ///   another machine and `allowsCleartext` is false.
    public func startSyncing(
        with url: URL, token: String, backoff: Backoff = Backoff(), allowsCleartext: Bool = false
    ) async throws -> LibrarySync {
        let endpoint = try ServerEndpoint(url: url, token: token, allowsCleartext: allowsCleartext)
        // What the library holds now, so that what arrives later is told apart from it.
        let documents = await offThePool { (try? self.catalog(includingDeleted: true)) ?? [] }
        var conflicted: [DocumentID] = []
        for document in documents where await competes(document.id, type: document.typeIdentifier) {
            conflicted.append(document.id)
        }
        return LibrarySync(
            library: self, endpoint: endpoint, backoff: backoff, documents: documents, conflicted: conflicted)
    }
}

/// A library's running sync with a server (`DocumentLibrary.startSyncing(with:token:backoff:allowsCleartext:)`).
public final class LibrarySync: Sendable {
    /// What happens, in order: connection states, sessions, documents added, removed, renamed or changed by sync, and
    /// conflicts that appear or are settled. One consumer; events wait (up to 1,024, then the oldest are dropped)
    /// until read. The stream ends after ``stop()``, or by itself once the server refused the token
    /// (``ConnectionState/refused(code:reason:)``).
    public let events: AsyncStream<LibraryEvent>
    private let live: Mutex<LiveSync?>
    private let continuation: AsyncStream<LibraryEvent>.Continuation
    /// This sync among the library's live ones (`DocumentLibrary.syncsLive`), until it stops.
    private let registration: LiveSyncRegistration

    init(
        library: DocumentLibrary, endpoint: ServerEndpoint, backoff: Backoff, documents: [DocumentInfo],
        conflicted: [DocumentID]
    ) {
        (events, continuation) = AsyncStream.makeStream(of: LibraryEvent.self, bufferingPolicy: .bufferingNewest(1024))
        // From now on open documents commit their edits within `AutosavePolicy.liveCommitDelay`.
        let registration = LiveSyncRegistration(library)
        self.registration = registration
        // The connection and the observer share one queue (the library's work executor, when it has one): handing an
        // event over wakes no other thread.
        let executor = library.workExecutor ?? BlockingWorkExecutor(label: "folio.library-sync")
        let observer = LibraryObserver(
            library: library, registration: registration, continuation: continuation, executor: executor,
            known: Dictionary(documents.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }),
            conflicted: Set(conflicted))
        let sync = LiveSync(store: library.store, endpoint: endpoint, backoff: backoff, executor: executor) { event in
            await observer.handle(event)
        }
        live = Mutex(sync)
        // Open documents' selections leave through this sync (`Document.setSelection(_:)`).
        library.attachPresence { [weak sync] document, state in sync?.setPresence(state, in: document) }
    }

    /// Stops syncing: closes the connection and ends ``events``. Changes already sent stay on the server; what was
    /// not sent goes at the next sync.
    public func stop() async {
        let running = live.withLock { current in
            defer { current = nil }
            return current
        }
        registration.library.attachPresence(nil)
        registration.end()
        await running?.stop()
        continuation.finish()
    }

    deinit {
        // Let go of without `stop()`: the library no longer counts it.
        registration.end()
    }
}

/// A live sync counted among the library's (`DocumentLibrary.syncsLive`) from its start until it ends: stopped,
/// let go of, or stopped by itself (a refused token), whichever comes first.
private final class LiveSyncRegistration: Sendable {
    let library: DocumentLibrary
    private let running = Atomic<Bool>(true)

    init(_ library: DocumentLibrary) {
        self.library = library
        library.noteLiveSync(running: true)
    }

    /// Stops counting the sync; later calls do nothing.
    func end() {
        if running.exchange(false, ordering: .relaxed) { library.noteLiveSync(running: false) }
    }
}

/// Turns a connection's events into the library's: applies what arrived to open documents and files, and says what
/// changed in the catalog and in conflicts.
///
/// Its work reads the store and moves files (blocking calls), so it runs on the connection's queue, off the
/// cooperative pool: many libraries syncing in one process never take the pool's few threads from the app.
private actor LibraryObserver {
    let library: DocumentLibrary
    let registration: LiveSyncRegistration
    let continuation: AsyncStream<LibraryEvent>.Continuation
    private var caughtUp = false
    private let executor: BlockingWorkExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The catalog entries and conflicts last reported.
    private var known: [DocumentID: DocumentInfo]
    private var conflicted: Set<DocumentID>
    /// What the previous connection's token let the library sync, once a server said it.
    private var scope: SyncScope?

    init(
        library: DocumentLibrary, registration: LiveSyncRegistration,
        continuation: AsyncStream<LibraryEvent>.Continuation, executor: BlockingWorkExecutor,
        known: [DocumentID: DocumentInfo], conflicted: Set<DocumentID>
    ) {
        self.executor = executor
        self.library = library
        self.registration = registration
        self.continuation = continuation
        self.known = known
        self.conflicted = conflicted
    }

    func handle(_ event: ServerSyncEvent) async {
        switch event {
        case .connecting(let attempt):
            continuation.yield(.connection(.connecting(attempt: attempt)))
        case .connected:
            caughtUp = false
            continuation.yield(.connection(.connected))
            continuation.yield(.syncStarted)
        case .caughtUp(let report):
            caughtUp = true
            // The server gave all it has of the documents it announced: the own changes of removed documents among
            // them that it did not bring back are gone.
            let announced = Set(report.caughtUpDocuments)
            library.settleRemovedOwnChanges { announced.contains($0) }
            continuation.yield(.syncFinished(report))
        case .received(let documents):
            await apply(documents)
        case .acknowledged:
            break
        case .readOnly:
            continuation.yield(.connection(.readOnly))
        case .scope(let granted):
            // Documents the library holds that the last connection synced and this one may not.
            if let scope {
                let held = (try? library.catalog(includingDeleted: true).map(\.id)) ?? []
                let revoked = held.filter { scope.includes($0) && !granted.includes($0) }.sorted()
                if !revoked.isEmpty { continuation.yield(.documentsRevoked(revoked)) }
            }
            scope = granted
            if case .documents = granted { continuation.yield(.scope(granted)) }
        case .presence(let document, let device, let state):
            await library.receivePresence(state, from: device, in: document)
        case .disconnected(let reason, let retryIn):
            // Others' presence came with the connection and ends with it; the next one brings it again.
            await library.forgetPresence()
            if !caughtUp { continuation.yield(.syncFailed(reason: reason)) }
            continuation.yield(.connection(.waiting(reason: reason, retryIn: retryIn)))
        case .refused(let code, let reason):
            if !caughtUp { continuation.yield(.syncFailed(reason: reason)) }
            continuation.yield(.connection(.refused(code: code, reason: reason)))
            // Not for an expired token (4402: a fresh one is the app's to get) nor 4405 (the token still reads; the
            // device sent what it may not).
            if code == 4401 || code == 4403 { continuation.yield(.accessRevoked(code: code, reason: reason)) }
        case .stopped:
            // Nothing syncs any more: open documents stop committing each edit as it is made, and show no one.
            registration.end()
            await library.forgetPresence()
            continuation.yield(.connection(.stopped))
            // Stopped by itself (a refused token): nothing more will come.
            continuation.finish()
        }
    }

    /// What `documents` were before, what they are after the open ones show what arrived, and the events between.
    private func apply(_ documents: [DocumentID]) async {
        var before: [DocumentID: (info: DocumentInfo?, conflicted: Bool)] = [:]
        for id in documents {
            before[id] = (known[id], conflicted.contains(id))
        }
        for id in documents { try? library.followFile(of: id) }
        try? await library.refreshOpenDocuments(documents)
        for id in documents {
            let info = try? library.catalogInfo(of: id)
            let old = before[id]?.info
            switch (old, info) {
            case (nil, let new?) where !new.isDeleted:
                continuation.yield(.documentAdded(id, name: new.displayName))
            case (let old?, let new?) where !old.isDeleted && new.isDeleted:
                continuation.yield(.documentRemoved(id))
            case (let old?, let new?) where old.displayName != new.displayName && !new.isDeleted:
                continuation.yield(.documentRenamed(id, from: old.displayName, to: new.displayName))
                continuation.yield(.documentChanged(id))
            default:
                continuation.yield(.documentChanged(id))
            }
            known[id] = info
            let isConflicted = await library.competes(id, type: info?.typeIdentifier)
            if isConflicted, !(before[id]?.conflicted ?? false) {
                conflicted.insert(id)
                continuation.yield(.conflictAppeared(id))
            } else if !isConflicted, before[id]?.conflicted ?? false {
                conflicted.remove(id)
                continuation.yield(.conflictResolved(id))
            }
        }
    }
}

extension DocumentLibrary {
    /// Whether document `id`, of the type named `type`, has competing versions (``hasCompetingVersions(_:as:)``
    /// for the models Folio ships, whose versions may merge silently; an app's own model by its heads); false when
    /// the log cannot be read.
    func competes(_ id: DocumentID, type: String?) async -> Bool {
        switch type {
        case TextDocument.documentType.identifier?:
            (try? await hasCompetingVersions(id, as: TextDocument.self)) ?? false
        case PagesDocument.documentType.identifier?:
            (try? await hasCompetingVersions(id, as: PagesDocument.self)) ?? false
        default:
            (try? await hasCompetingVersions(id)) ?? false
        }
    }
}
