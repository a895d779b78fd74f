import FolioCore
import Synchronization

/// Who wants to know that a store's log grew by a local append: a live connection to a server sends the new changes
/// as they are committed, rather than polling.
final class AppendObservers: Sendable {
    private let handlers = Mutex<(next: UInt64, byID: [UInt64: @Sendable (DocumentID) -> Void])>((0, [:]))

    func add(_ handler: @escaping @Sendable (DocumentID) -> Void) -> UInt64 {
        handlers.withLock { state in
            state.next += 1
            state.byID[state.next] = handler
            return state.next
        }
    }

    func remove(_ id: UInt64) {
        _ = handlers.withLock { $0.byID.removeValue(forKey: id) }
    }

    /// Calls every handler, outside the lock, in the order they were added.
    func notify(_ document: DocumentID) {
        let current = handlers.withLock { state in state.byID.sorted { $0.key < $1.key }.map(\.value) }
        for handler in current { handler(document) }
    }
}

/// An observation of a store's appends (``ChangeLogStore/observeAppends(_:)``); it ends with ``cancel()`` or when it
/// is released.
public final class AppendObservation: Sendable {
    private let observers: AppendObservers
    private let id: UInt64

    init(observers: AppendObservers, id: UInt64) {
        self.observers = observers
        self.id = id
    }

    /// Stops the observation; the handler is not called after this returns (unless a call is running).
    public func cancel() { observers.remove(id) }

    deinit { observers.remove(id) }
}

extension ChangeLogStore {
    /// Calls `handler` with the document after every local append to this store (``append(_:to:on:author:blobs:blobBytes:localState:unpublished:)``)
    /// once it has committed, on the appending thread. The handler must be quick: it runs before `append` returns.
    /// Changes ingested from peers are not reported.
    ///
    /// - Returns: the observation; keep it for as long as the handler should be called.
    public func observeAppends(_ handler: @escaping @Sendable (DocumentID) -> Void) -> AppendObservation {
        AppendObservation(observers: appendObservers, id: appendObservers.add(handler))
    }
}
