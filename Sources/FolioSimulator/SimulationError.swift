import FolioDocuments
import FolioStore
import FolioSync

/// Why a step of a run could not be done, or an invariant broke.
enum SimulationError: Error, CustomStringConvertible {
    /// The step could not be done as written (a device that is down, a document it does not hold…).
    case step(String)
    /// A document operation failed.
    case document(DocumentError)
    /// A store operation failed.
    case store(StoreError)
    /// Sync failed.
    case sync(SyncError)
    /// An invariant broke: the run found a bug.
    case invariant(String)

    /// What a call of the documents' API threw: a ``DocumentError`` as documented, any other error as the cause of
    /// one.
    static func document(_ error: any Error) -> SimulationError {
        if let error = error as? DocumentError { return .document(error) }
        return .document(DocumentError(.invalidOperation, "a document operation failed", cause: error))
    }

    /// What a call of the store's API threw: a ``StoreError`` as documented, any other error as the cause of one.
    static func store(_ error: any Error) -> SimulationError {
        if let error = error as? StoreError { return .store(error) }
        return .store(StoreError(.database, "a store operation failed", cause: error))
    }

    var description: String {
        switch self {
        case .step(let message), .invariant(let message): message
        case .document(let error): error.description
        case .store(let error): error.description
        case .sync(let error): error.description
        }
    }
}
