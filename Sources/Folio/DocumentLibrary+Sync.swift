import FolioCore
import FolioDocuments
import FolioStore
import FolioSync

extension DocumentLibrary {
    /// Exchanges changes with peers through `transport` (the in-memory cloud of a simulation, a shared folder…):
    /// exactly what each side lacks. Open documents commit their open groups first (`commitOpenDocuments()`), so
    /// every edit made before the sync goes out; the open documents that changes arrived for are brought up to date before it
    /// returns (`refreshOpenDocuments(_:)`: contents, conflicts, and the library's conflict policy applied); the
    /// files of documents renamed, moved or deleted elsewhere follow at once (`updateFile(of:)`).
    ///
    /// - Returns: what was sent and received; its `problems` include an open document that could not commit or show
    ///   what arrived (it catches up before its next edit).
    /// - Throws: `DocumentError` `.store`, with the `SyncError` as its cause.
    @discardableResult
    public func sync(through transport: some SyncTransport) async throws -> SyncReport {
        // The sync's store and file work blocks; it runs on a queue of its own, off the cooperative pool.
        let executor = BlockingWorkExecutor(label: "folio.sync")
        defer { withExtendedLifetime(executor) {} }
        return try await withTaskExecutorPreference(executor) {
            // A document that cannot commit or catch up does not stop the exchange: what it could not do is in the
            // report's problems, and it tries again at its next edit.
            var problems: [String] = []
            do { try await commitOpenDocuments() } catch {
                problems.append("an open document could not commit its edits before the sync: \(error)")
            }
            var report: SyncReport
            do {
                report = try await transport.sync(store)
            } catch {
                throw DocumentError(.store, "syncing the library at \(root.path) failed", cause: error)
            }
            for document in report.updatedDocuments {
                // What arrived is kept either way: a file that cannot follow now follows at the document's next save.
                try? await updateFile(of: document)
            }
            do { try await refreshOpenDocuments(report.updatedDocuments) } catch {
                problems.append("an open document could not show what arrived: \(error)")
            }
            report.problems += problems
            return report
        }
    }
}
