import FolioCore
import FolioFiles
import FolioStore
import Foundation

extension DocumentLibrary {
    /// Removes the library at `root` from this device, all of it: its shared documents' files (`Shared/`), its local
    /// documents (`Documents/`, which no other device holds), then its store (`.folio/`: every document's history,
    /// the changes not yet sent, and this device's key), then `root` itself when nothing else is left in it. Nothing
    /// is sent anywhere: what the server and other devices hold of the shared documents stays with them, and what only
    /// this device held (local documents, unsent changes) is gone.
    ///
    /// This is what an app does when the server no longer grants the person the library (`LibraryEvent.accessRevoked`)
    /// and the app chooses not to keep what they could see. Call it once every `DocumentLibrary` of `root` is let go
    /// of (its sync stopped, its documents closed). Files the app put in `root` beside the library's are kept. A
    /// removal cut short (a crash) leaves a library that opens with less or nothing in it; calling this again finishes
    /// it.
    ///
    /// - Parameters:
    ///   - root: the library directory, as given to ``init(at:key:deviceName:person:types:clock:identifiers:fileSystem:durability:access:autosave:conflictPolicy:backgroundWork:executor:blobThreshold:)``.
    ///   - fileSystem: the file I/O.
    /// - Throws: ``DocumentError`` `.save` when a part cannot be removed (what was removed before it stays removed).
    public static func removeLocalCopies(
        at root: URL, fileSystem: any FileSystem = PosixFileSystem()
    ) throws(DocumentError) {
        let parts = [
            directory(of: .local, in: root), directory(of: .shared, in: root),
            root.appendingPathComponent(".folio", isDirectory: true),
        ]
        for part in parts {
            do { try fileSystem.remove(at: part) } catch let error as FileSystemError where error.code == .notFound {
            } catch {
                throw DocumentError(.save, "cannot remove \(part.path)", cause: error)
            }
        }
        do {
            if try fileSystem.contentsOfDirectory(at: root).isEmpty { try fileSystem.remove(at: root) }
        } catch let error as FileSystemError where error.code == .notFound {
        } catch {
            throw DocumentError(.save, "cannot remove \(root.path)", cause: error)
        }
    }
}

extension DocumentLibrary {
    /// Removes one document from this device: the file this device saved it to, then everything the library's
    /// store holds of it (its history, the changes of it not yet sent, its checkpoints and local state, the blobs
    /// only it refers to). The library then lists it no more. Nothing is sent anywhere: this is not a deletion, and
    /// what the server and other devices hold of the document stays with them. A sync whose token grants the
    /// document again brings back what the server holds of it; the changes this device made there that never left it,
    /// and a document kept to this device (its container `.local`), are gone for good.
    ///
    /// This is what an app does with a document the server no longer shares with the person
    /// (`LibraryEvent.documentsRevoked`), when it chooses not to keep what they could see. The document must not be
    /// open; it cannot be opened while it is being removed. A removal cut short (a crash) leaves the file gone and
    /// the history whole; calling this again finishes it.
    ///
    /// - Parameter id: the document.
    /// - Returns: what the store removed.
    /// - Throws: ``DocumentError`` `.open` when the document is open or being opened (nothing is removed),
    ///   `.notFound` when the library holds nothing of it, `.save` when its file cannot be removed (nothing of the
    ///   store is removed then), `.store`.
    @discardableResult
    public func removeLocalCopy(of id: DocumentID) async throws(DocumentError) -> DocumentRemoval {
        try await offThePool { () throws(DocumentError) in
            try self.openDocuments.removing(id) { () throws(DocumentError) in try self.removeClosedCopy(of: id) }
        }
    }

    /// Stops waiting for this device's own changes of the removed documents that `synced` names: documents a peer
    /// announced and gave all it has of, in a sync that completed (`SyncReport.caughtUpDocuments`;
    /// ``ChangeLogStore/settleRemovedOwnChanges(of:)``). What the device wrote there after the peer last heard from
    /// it is gone, and its next change follows the last that came back. A document that nothing brought back is left
    /// as it is.
    package func settleRemovedOwnChanges(where synced: (DocumentID) -> Bool) {
        guard let documents = try? store.documentsAwaitingOwnChanges() else { return }
        for document in documents where synced(document) { _ = try? store.settleRemovedOwnChanges(of: document) }
    }

    /// What ``removeLocalCopy(of:)`` does once the document is known to be closed, on the caller's thread.
    private func removeClosedCopy(of id: DocumentID) throws(DocumentError) -> DocumentRemoval {
        let heads: [ChangeHash]
        let waiting: Int
        do {
            heads = try store.heads(of: id).map(\.hash)
            waiting = try store.pendingChanges(of: id).count
        } catch {
            throw .store(error, "reading document \(id)")
        }
        guard !heads.isEmpty || waiting > 0 else {
            throw DocumentError(.notFound, "the library holds nothing of document \(id)")
        }
        // A move of the file (a rename that arrived) waits, or is done: the file is where the record says.
        let removal = try fileMoves.withLock { _ throws(DocumentError) in try removeFileAndStoreCopy(of: id) }
        catalogCache.withLock { $0[id] = nil }
        fileNameClaims.withLock { $0[id] = nil }
        return removal
    }

    /// Removes the document's saved file, then what the store holds of it.
    private func removeFileAndStoreCopy(of id: DocumentID) throws(DocumentError) -> DocumentRemoval {
        if let record = try savedFileRecord(of: id) {
            let url = url(ofRelativePath: record.relativePath)
            do {
                if try fileSystem.itemKind(at: url) != .absent {
                    try fileSystem.remove(at: url)
                    try fileSystem.synchronizeDirectory(at: url.deletingLastPathComponent())
                }
            } catch {
                throw DocumentError(.save, "cannot remove \(url.path), the file of document \(id)", cause: error)
            }
        }
        do {
            return try store.removeLocalCopy(of: id)
        } catch {
            throw .store(error, "removing the local copy of document \(id)")
        }
    }
}
