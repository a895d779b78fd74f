import FolioCore
import FolioDocuments
import FolioStore
import FolioSync

extension DocumentLibrary {
    /// Exchanges changes with peers through `transport` (the in-memory cloud of a simulation, a shared folder…):
    /// exactly what each side lacks. Open documents commit their open groups first (`commitOpenDocuments()`), so
    /// every edit made before the sync goes out; the open documents that changes arrived for are brought up to date before it
    /// returns (`refreshOpenDocuments(_:)`: contents, conflicts, and the library's conflict policy applied); the
    /// files of documents renamed, moved or deleted elsewhere follow at once (`updateFile(of:)`). When bringing the
    /// open documents up to date settled a conflict, the sync exchanges once more, so that the settlement leaves
    /// with it: a device that then receives the settled changes receives their settlement too, and settles nothing
    /// itself (one resolution for one conflict, not one per device).
    ///
    /// - Returns: what was sent and received; its `problems` include an open document that could not commit or show
    ///   what arrived (it catches up before its next edit).
    /// - Throws: `DocumentError` `.store`, with the `SyncError` as its cause.
    @discardableResult
    public func sync(through transport: some SyncTransport) async throws -> SyncReport {
        // The sync's store and file work blocks; it runs on a queue of its own (or the library's work executor), off
        // the cooperative pool.
        let executor = workExecutor ?? BlockingWorkExecutor(label: "folio.sync")
        defer { withExtendedLifetime(executor) {} }
        return try await withTaskExecutorPreference(executor) {
            // A document that cannot commit or catch up does not stop the exchange: what it could not do is in the
            // report's problems, and it tries again at its next edit.
            var problems: [String] = []
            do { try await commitOpenDocuments() } catch {
                problems.append("an open document could not commit its edits before the sync: \(error)")
            }
            var report = try await exchange(through: transport)
            let before = ownChanges(in: report.updatedDocuments)
            await follow(report.updatedDocuments, problems: &problems)
            if ownChanges(in: report.updatedDocuments) != before {
                // The open documents settled conflicts with what arrived: the settlements leave in this sync, so
                // that a device receiving the changes they settle receives them too, and does not settle the same
                // conflict again on its own.
                let settlements = try await exchange(through: transport)
                report.add(settlements)
                await follow(settlements.updatedDocuments, problems: &problems)
            }
            report.problems += problems
            // The peer gave all it has of the documents it announced: the own changes of removed documents among
            // them that it did not bring back are gone.
            if report.isComplete {
                let caughtUp = Set(report.caughtUpDocuments)
                settleRemovedOwnChanges { caughtUp.contains($0) }
            }
            return report
        }
    }

    private func exchange(through transport: some SyncTransport) async throws -> SyncReport {
        do {
            return try await transport.sync(store)
        } catch {
            throw DocumentError(.store, "syncing the library at \(root.path) failed", cause: error)
        }
    }

    /// Brings the files and the open documents of `documents` up to date with what arrived.
    private func follow(_ documents: [DocumentID], problems: inout [String]) async {
        for document in documents {
            // What arrived is kept either way: a file that cannot follow now follows at the document's next save.
            try? await updateFile(of: document)
        }
        do { try await refreshOpenDocuments(documents) } catch {
            problems.append("an open document could not show what arrived: \(error)")
        }
    }

    /// How many changes this device made to each of `documents`, as far as the log can be read.
    private func ownChanges(in documents: [DocumentID]) -> [UInt64] {
        documents.map { document in (try? store.vector(of: document))?[device.id] ?? 0 }
    }
}

extension SyncReport {
    /// Adds what a further exchange of the same sync did: its counts, documents and problems, and whether it ran to
    /// its end.
    mutating func add(_ other: SyncReport) {
        messagesSent += other.messagesSent
        messagesReceived += other.messagesReceived
        messagesRejected += other.messagesRejected
        changesSent += other.changesSent
        changesReceived += other.changesReceived
        changesApplied += other.changesApplied
        duplicates += other.duplicates
        updatedDocuments = Array(Set(updatedDocuments).union(other.updatedDocuments)).sorted()
        isComplete = isComplete && other.isComplete
        caughtUpDocuments = isComplete ? Array(Set(caughtUpDocuments).union(other.caughtUpDocuments)).sorted() : []
        problems += other.problems
    }
}
