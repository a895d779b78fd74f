import FolioCore
import FolioStore
import Synchronization

/// What a library needs of an open document whatever its model: to bring it up to date with the log.
protocol OpenDocument: Actor {
    /// Picks up what the log holds beyond what the document shows (``Document/refresh()``).
    func refresh() throws -> Bool
    /// Picks up what the log holds, when it moved since the document last looked (``Document/catchUp()``).
    func catchUp() throws
    /// Commits the open group (``Document/commit()``).
    func commit() throws
    /// Throws `.closed` when the document is closed.
    func ensureOpen() throws
    /// Whether versions compete in the document as it shows them (``DocumentState/inConflict``).
    var showsCompetingVersions: Bool { get }
    /// Takes another device's presence (the bytes of a `PresenceState`; empty: it left the document), heard at
    /// `heard` (milliseconds since 1970, by the library's clock; now when `nil`).
    func receivePresence(_ state: [UInt8], from device: DeviceID, heard: Int64?)
    /// Forgets every other device's presence (the connection that brought it ended).
    func forgetPresence()
}

/// The documents a library has open, one ``Document`` each: opening a document that is open gives the same one, so
/// that every part of an app edits one model and no edit hides another.
///
/// A document leaves the list when it closes, or when the app lets go of it (entries are weak); the next opening
/// then reads it afresh. Two openings at once wait for one reading.
final class OpenDocuments: Sendable {
    /// A document being opened, open, or having its local copy removed (``removing(_:_:)``).
    private enum Slot {
        case opening(Task<any OpenDocument, any Error>)
        case open(WeakDocument)
        case removing
    }

    private struct WeakDocument {
        weak var document: (any OpenDocument)?
    }

    private let slots = Mutex<[DocumentID: Slot]>([:])

    /// The open document `id`, brought up to date with the log, or the one `open` makes (which becomes the open
    /// one).
    ///
    /// A document that closes while it is handed out is not handed out: the opening starts again. So is one that
    /// another caller's opening failed to make as the wrong model.
    ///
    /// `open` runs in a task of its own (so that a caller who gives up does not stop an opening others wait for),
    /// which prefers `executor` when given (the library's ``DocumentLibrary/workExecutor``).
    ///
    /// - Throws: what `open` throws, or what bringing the open document up to date throws; nothing is kept then.
    func document(
        _ id: DocumentID, on executor: BlockingWorkExecutor? = nil,
        openingWith open: @escaping @Sendable () async throws -> any OpenDocument
    ) async throws -> any OpenDocument {
        var attempts = 0
        while true {
            attempts += 1
            let found = slots.withLock { slots -> Found in
                switch slots[id] {
                case .open(let weak)?:
                    if let document = weak.document { return .open(document) }
                case .opening(let task)?:
                    return .opening(task, isOurs: false)
                case .removing?:
                    return .removing
                case nil:
                    break
                }
                let task =
                    executor.map { executor in Task(executorPreference: executor) { try await open() } }
                    ?? Task { try await open() }
                slots[id] = .opening(task)
                return .opening(task, isOurs: true)
            }
            do {
                switch found {
                case .removing:
                    throw DocumentError(.notFound, "document \(id) is being removed from this device")
                case .open(let document):
                    // Open already: as the log holds it now (the library may have renamed or deleted it since).
                    try await document.catchUp()
                    return document
                case .opening(let task, _):
                    let document = try await task.value
                    slots.withLock { slots in
                        if case .opening(let opening)? = slots[id], opening == task {
                            slots[id] = .open(WeakDocument(document: document))
                        }
                    }
                    try await document.ensureOpen()
                    return document
                }
            } catch {
                var isOurs = false
                if case .opening(let task, let ours) = found {
                    isOurs = ours
                    slots.withLock { slots in
                        if case .opening(let opening)? = slots[id], opening == task { slots[id] = nil }
                    }
                }
                // Closed since it was made or found (by another part of the app): open it afresh.
                let code = (error as? DocumentError)?.code
                let retry = code == .closed || (code == .wrongType && !isOurs)
                guard retry, attempts < Self.attemptLimit else { throw error }
            }
        }
    }

    /// What an opening found under the lock: the open document, or the reading that makes it.
    private enum Found {
        case open(any OpenDocument)
        case opening(Task<any OpenDocument, any Error>, isOurs: Bool)
        case removing
    }

    /// How many times an opening starts again when the document closes under it.
    static var attemptLimit: Int { 8 }

    /// Takes `document` off the list (it closed).
    func remove(_ document: any OpenDocument, id: DocumentID) {
        slots.withLock { slots in
            if case .open(let weak)? = slots[id], weak.document === document { slots[id] = nil }
        }
    }

    /// Runs `body` while `id` is marked as having its local copy removed: an opening meanwhile fails (`.notFound`).
    ///
    /// - Throws: ``DocumentError`` `.open` when the document is open or being opened (nothing runs then), or what
    ///   `body` throws.
    func removing<T>(_ id: DocumentID, _ body: () throws(DocumentError) -> T) throws(DocumentError) -> T {
        let isFree = slots.withLock { slots in
            switch slots[id] {
            case .open(let weak)? where weak.document != nil: return false
            case .opening?, .removing?: return false
            case .open?, nil:
                slots[id] = .removing
                return true
            }
        }
        guard isFree else {
            throw DocumentError(.open, "document \(id) is open on this device: close it before removing its local copy")
        }
        defer {
            slots.withLock { slots in
                if case .removing? = slots[id] { slots[id] = nil }
            }
        }
        return try body()
    }

    /// Every open document, by identity.
    func all() -> [any OpenDocument] {
        slots.withLock { slots in
            slots.keys.sorted().compactMap { id in
                if case .open(let weak)? = slots[id] { return weak.document }
                return nil
            }
        }
    }

    /// The open documents among `ids`, in the order given, those being opened included (once open: one whose
    /// opening read the log before a sync's changes must still be shown them). An opening that fails is passed
    /// over; its caller has its error.
    func documents(among ids: [DocumentID]) async -> [any OpenDocument] {
        enum Found {
            case document(any OpenDocument)
            case opening(Task<any OpenDocument, any Error>)
        }
        let found = slots.withLock { slots in
            ids.compactMap { id -> Found? in
                switch slots[id] {
                case .open(let weak)?: weak.document.map(Found.document)
                case .opening(let task)?: .opening(task)
                case .removing?, nil: nil
                }
            }
        }
        var documents: [any OpenDocument] = []
        for item in found {
            switch item {
            case .document(let document): documents.append(document)
            case .opening(let task): if let document = try? await task.value { documents.append(document) }
            }
        }
        return documents
    }
}
