import FolioCore
import GRDB
import Synchronization

/// With ``StoreAccess/exclusive``, what the store keeps in memory of its file: every document's frontier, every
/// device's name, and the lifecycle changes of the documents whose lifecycle was read or that are new to it. The
/// store is the file's only user, so what it committed is all there is: a vector, the heads to read, the summaries a
/// sync announces, a document's lifecycle or the list of devices cost no query, and registering a device that is
/// already known costs no transaction.
///
/// The cache is read from the file when the store opens and then follows the store's own commits: a write
/// transaction stages what it saves, which replaces what is remembered when it commits and is dropped when it rolls
/// back. Reads inside that transaction see what it staged. ``ChangeLogStore/verify(checkingPages:)`` compares the
/// cache with the file. A store with shared access has none: other connections may write.
final class ExclusiveStoreCache: Sendable {
    private let state: Mutex<State>

    /// Reads every document's frontier, which documents have waiting changes, and the devices.
    init(reading db: Database) throws {
        state = Mutex(try State(reading: db))
    }

    /// The memory of a new, empty store.
    init() {
        state = Mutex(State())
    }

    /// What `other` has committed, for a copy of its store taken outside a write transaction.
    init(copying other: ExclusiveStoreCache) {
        state = Mutex(State(committed: other.state.withLock { $0.committed }))
    }

    /// The document of `documentRow` as the open transaction (if any) sees it.
    func document(_ documentRow: Int64) -> CachedDocument? {
        state.withLock { $0.staged.documents[documentRow] ?? $0.committed.documents[documentRow] }
    }

    /// Keeps `change`, just read, with its document's tip (if it is still the tip), so that the next read of the
    /// tip costs no query. Called outside write transactions: what is committed is what the file holds.
    func remember(_ change: Change, documentRow: Int64) {
        state.withLock { state in
            guard let tip = state.committed.documents[documentRow]?.frontier.tips[change.id.device],
                tip.hash == change.hash
            else { return }
            state.committed.documents[documentRow]!.frontier.keep(change)
        }
    }

    /// Keeps `lifecycle`, the lifecycle changes of `documentRow` just read, so that the next read costs no query.
    /// Called outside write transactions, as ``remember(_:documentRow:)``.
    func remember(lifecycle: [Change], documentRow: Int64) {
        state.withLock { state in
            guard state.committed.documents[documentRow] != nil else { return }
            state.committed.documents[documentRow]!.lifecycle = lifecycle
        }
    }

    /// The committed documents that have a log, in no particular order.
    func listedDocuments() -> [CachedDocument] {
        state.withLock { $0.committed.documents.values.filter(\.isListed) }
    }

    /// `device` as the open transaction (if any) sees it: `nil` for an unknown device, an empty name and person for
    /// one known without them.
    func device(_ device: DeviceID) -> Device? {
        state.withLock { $0.staged.devices[device] ?? $0.committed.devices[device] }
    }

    /// The committed devices, in identity order.
    func devices() -> [Device] {
        state.withLock { state in Array(state.committed.devices.values) }.sorted { $0.id < $1.id }
    }

    /// Stages `frontier`, just saved in `db`'s open write transaction, with whether the document has waiting
    /// changes (`nil`: as before) and the lifecycle changes the transaction added, which join the remembered ones.
    /// A document new to the store remembers its lifecycle from the start: the memory holds every document with a
    /// log from the store's opening on, so one it does not hold had no change before.
    func stage(
        _ frontier: Frontier, of document: DocumentID, hasWaiting: Bool?, lifecycleAdded: [Change], in db: Database
    ) {
        stage(in: db) { state in
            let row = frontier.documentRow
            var entry =
                state.staged.documents[row] ?? state.committed.documents[row]
                ?? CachedDocument(document: document, frontier: frontier, hasWaiting: false, lifecycle: [])
            entry.frontier = frontier
            if let hasWaiting { entry.hasWaiting = hasWaiting }
            if !lifecycleAdded.isEmpty, let lifecycle = entry.lifecycle {
                entry.lifecycle = (lifecycle + lifecycleAdded).sorted { ($0.lamport, $0.id) < ($1.lamport, $1.id) }
            }
            state.staged.documents[row] = entry
        }
    }

    /// Stages whether the document of `documentRow` has waiting changes, just found in `db`'s open write
    /// transaction after some of them were dropped. A document the memory does not hold had none.
    func stage(hasWaiting: Bool, of documentRow: Int64, in db: Database) {
        stage(in: db) { state in
            guard var entry = state.staged.documents[documentRow] ?? state.committed.documents[documentRow] else {
                return
            }
            entry.hasWaiting = hasWaiting
            state.staged.documents[documentRow] = entry
        }
    }

    /// Stages that the document of `documentRow` has no log any more (its local copy was removed in `db`'s open
    /// write transaction): no frontier, nothing waiting, no lifecycle.
    func stageRemoval(of documentRow: Int64, document: DocumentID, in db: Database) {
        stage(in: db) { state in
            state.staged.documents[documentRow] = CachedDocument(
                document: document, frontier: Frontier(empty: documentRow), hasWaiting: false, lifecycle: [])
        }
    }

    /// Stages `device` with its name and person (empty for a device recorded without them), just saved in `db`'s
    /// open transaction.
    func stage(_ device: Device, in db: Database) {
        stage(in: db) { $0.staged.devices[device.id] = device }
    }

    /// Applies `change` to what is staged; the transaction's first staging arranges for its commit to apply what
    /// was staged and for its rollback to drop it.
    private func stage(in db: Database, _ change: (inout State) -> Void) {
        let isFirst = state.withLock { state in
            let isFirst = state.staged.isEmpty
            change(&state)
            return isFirst
        }
        guard isFirst else { return }
        db.afterNextTransaction(
            onCommit: { _ in
                self.state.withLock { state in
                    state.committed.documents.merge(state.staged.documents) { _, new in new }
                    state.committed.devices.merge(state.staged.devices) { _, new in new }
                    state.staged = Contents()
                }
            },
            onRollback: { _ in self.state.withLock { $0.staged = Contents() } })
    }

    private struct Contents: Sendable {
        /// By document row.
        var documents: [Int64: CachedDocument] = [:]
        /// Devices, with their names and persons (empty for none).
        var devices: [DeviceID: Device] = [:]

        var isEmpty: Bool { documents.isEmpty && devices.isEmpty }
    }

    private struct State: Sendable {
        var committed = Contents()
        /// What the open write transaction saved.
        var staged = Contents()

        init() {}

        init(committed: Contents) {
            self.committed = committed
        }

        init(reading db: Database) throws {
            for (row, entry) in try Frontier.all(in: db) {
                committed.documents[row] = CachedDocument(
                    document: entry.document, frontier: entry.frontier, hasWaiting: false)
            }
            for row in try Row.fetchAll(
                db, sql: "SELECT id, uuid FROM document WHERE id IN (SELECT document FROM pending)")
            {
                let documentRow: Int64 = row[0]
                if committed.documents[documentRow] == nil {
                    committed.documents[documentRow] = CachedDocument(
                        document: DocumentID(try ColumnDecoder.uuid(row[1])), frontier: Frontier(empty: documentRow),
                        hasWaiting: false)
                }
                committed.documents[documentRow]!.hasWaiting = true
            }
            for row in try Row.fetchAll(db, sql: "SELECT uuid, name, person FROM device") {
                let id = DeviceID(try ColumnDecoder.uuid(row[0]))
                committed.devices[id] = Device(id: id, name: row[1] as String? ?? "", person: row[2] as String? ?? "")
            }
        }
    }
}

/// What an ``ExclusiveStoreCache`` holds of one document.
struct CachedDocument: Sendable {
    var document: DocumentID
    var frontier: Frontier
    /// Whether some of the document's changes wait in the pending table.
    var hasWaiting: Bool
    /// The document's lifecycle changes in causal order, once known (read since the store opened, or the document
    /// was new to it); every transaction adds the ones it records.
    var lifecycle: [Change]? = nil

    /// Whether the document has a log: changes, or changes waiting for others.
    var isListed: Bool { !frontier.tips.isEmpty || hasWaiting }
}

extension ChangeLogStore {
    /// The frontier of `documentRow` as the open transaction sees it: remembered with exclusive access, read
    /// otherwise.
    func frontier(of documentRow: Int64, in db: Database) throws -> Frontier {
        guard let exclusiveCache else { return try Frontier(documentRow: documentRow, in: db) }
        return exclusiveCache.document(documentRow)?.frontier ?? Frontier(empty: documentRow)
    }

    /// Saves the tips of `frontier` that changed, inside the open write transaction, and stages it in the memory
    /// (with whether `document` has waiting changes, when that is known to have changed).
    func save(_ frontier: inout Frontier, of document: DocumentID, hasWaiting: Bool? = nil, in db: Database) throws {
        try frontier.save(in: db)
        let lifecycleAdded = frontier.takeLifecycleAdded()
        exclusiveCache?.stage(frontier, of: document, hasWaiting: hasWaiting, lifecycleAdded: lifecycleAdded, in: db)
    }
}
