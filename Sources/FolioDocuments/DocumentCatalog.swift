import FolioCore

/// Folds a document's lifecycle changes into what the library lists: name, type, container, deleted or not.
///
/// Each attribute takes the value of its latest setting: among the settings that no other setting happened after
/// (the causally maximal ones), the latest by wall time, then lamport, then device. So a rename made after another
/// always wins, and concurrent renames are settled by latest wins, identically on every device.
///
/// One rule overrides that for deletion: an edit concurrent with the delete wins, and the document stays (is
/// restored), so nothing a device wrote disappears. A move concurrent with an edit keeps both: the document moves
/// and keeps the edit, since the two touch different things.
///
/// A document is created once. Its creation is its first create in causal order (by lamport, then device), which
/// has no other create in its past, and it alone sets the type, for good, and the first name and container. Any
/// other create, which no library records (only a forged or corrupt change, or an identity two creators drew
/// alike), sets nothing: not the name, the container, the type, nor the existence of a deleted document. Two
/// creates neither of which saw the other are told apart by lamport and device alone, the same on every device;
/// nothing in the log can say which one is genuine.
enum DocumentCatalog {
    static func info(of document: DocumentID, lifecycle: [Change], heads: [Change]) -> DocumentInfo? {
        let latestChange = heads.max {
            ($0.wallTime, $0.lamport, $0.id.device) < ($1.wallTime, $1.lamport, $1.id.device)
        }
        // The first by (lamport, device, seq) has no other create in its past: a change's lamport exceeds its past's.
        guard let creation = lifecycle.filter(\.isCreate).min(by: { ($0.lamport, $0.id) < ($1.lamport, $1.id) }),
            case .lifecycle(.create(let name, let type, let container)) = creation.kind
        else { return nil }
        let lifecycle = lifecycle.filter { !$0.isCreate || $0.hash == creation.hash }
        let nameSetters = lifecycle.filter {
            switch $0.kind {
            case .lifecycle(.create), .lifecycle(.rename): true
            default: false
            }
        }
        let containerSetters = lifecycle.filter {
            switch $0.kind {
            case .lifecycle(.create), .lifecycle(.move): true
            default: false
            }
        }
        let existenceSetters = lifecycle.filter {
            switch $0.kind {
            case .lifecycle(.create), .lifecycle(.delete), .lifecycle(.restore): true
            default: false
            }
        }
        var info = DocumentInfo(
            id: document, displayName: name, typeIdentifier: type, container: container, isDeleted: false,
            modificationDate: latestChange?.wallTime ?? creation.wallTime, creationDate: creation.wallTime)
        if case .lifecycle(.rename(let newName)) = latest(nameSetters)?.kind { info.displayName = newName }
        if case .lifecycle(.move(let newContainer)) = latest(containerSetters)?.kind { info.container = newContainer }
        if let delete = latest(existenceSetters), case .lifecycle(.delete) = delete.kind {
            // A head that has not seen the delete carries an edit made concurrently with it: the edit wins.
            info.isDeleted = heads.allSatisfy { $0.vector.contains(delete.id) }
            info.restoredByConcurrentEdit = !info.isDeleted
        }
        return info
    }

    /// The latest of `changes`: causally maximal first, then by wall time, lamport and device.
    static func latest(_ changes: [Change]) -> Change? {
        let maximal = changes.filter { candidate in
            !changes.contains { $0.id != candidate.id && $0.vector.contains(candidate.id) }
        }
        return maximal.max { ($0.wallTime, $0.lamport, $0.id.device) < ($1.wallTime, $1.lamport, $1.id.device) }
    }
}

extension Change {
    /// Whether the change is a create.
    fileprivate var isCreate: Bool {
        if case .lifecycle(.create) = kind { true } else { false }
    }
}
