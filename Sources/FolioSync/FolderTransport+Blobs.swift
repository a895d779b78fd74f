import FolioCore
import FolioStore
import Foundation

/// Blobs in a shared folder: one file per blob, named by the hex of its SHA-256, in `<root>/blobs/`, written once by
/// whichever device first writes a change that refers to it, before the batch that holds the change. A reader takes
/// the blobs its store lacks that the folder has; a file whose bytes are not the blob its name says (damaged, or
/// someone else's) is refused and reported, and a writer replaces it.
extension FolderTransport {
    static let blobsDirectory = "blobs"

    private var blobsPath: String { root.path + "/" + Self.blobsDirectory }

    /// Stores the blobs `store` lacks that the folder holds, a few megabytes at a time.
    func readBlobs(into store: ChangeLogStore, report: inout SyncReport) throws(SyncError) {
        let missing: [BlobReference]
        do {
            missing = try store.missingBlobs(limit: 65_536)
        } catch {
            throw .store(error, while: "listing the blobs this store lacks")
        }
        guard !missing.isEmpty, try files.kind(blobsPath) == .directory else { return }
        var found: [(BlobReference, Data)] = []
        var bytes = 0
        func storeFound() throws(SyncError) {
            guard !found.isEmpty else { return }
            let intake: BlobIntake
            do {
                intake = try store.storeBlobs(found.map(\.1))
            } catch {
                throw .store(error, while: "storing \(found.count) blobs read from the folder")
            }
            report.blobsReceived += intake.stored.count
            for document in intake.documents { report.noteUpdated(document) }
            found = []
            bytes = 0
        }
        for reference in missing where reference.size <= store.limits.blobBytes {
            let path = blobsPath + "/" + reference.hash.hex
            // A file that cannot be read, or is not the blob, is reported and passed over: the sync goes on.
            let contents: Data
            do {
                guard try files.kind(path) == .file else { continue }
                guard try files.size(of: path) == reference.size else {
                    report.problems.append("\(path) is not the blob its name says: refused")
                    continue
                }
                contents = Data(try files.contents(of: path))
            } catch {
                report.problems.append("\(path) cannot be read: \(error.message)")
                continue
            }
            guard reference.isReferenced(by: contents) else {
                report.problems.append("\(path) is not the blob its name says: refused")
                continue
            }
            found.append((reference, contents))
            bytes += contents.count
            if bytes >= 64 << 20 { try storeFound() }
        }
        try storeFound()
    }

    /// Writes the blobs `changes` refer to that the folder lacks and the store holds.
    func writeBlobs(of changes: ArraySlice<Change>, from store: ChangeLogStore, report: inout SyncReport)
        throws(SyncError)
    {
        var references: [BlobReference] = []
        var seen: Set<BlobReference> = []
        for change in changes {
            for blob in change.blobs where seen.insert(blob).inserted { references.append(blob) }
        }
        guard !references.isEmpty else { return }
        var ensured = false
        for reference in references {
            let name = reference.hash.hex
            let path = blobsPath + "/" + name
            if try files.kind(path) == .file, isBlob(reference, at: path) { continue }
            let bytes: Data
            do {
                guard let held = try store.blobs([reference])[reference] else { continue }
                bytes = held
            } catch {
                throw .store(error, while: "reading \(reference) to write it to the folder")
            }
            if !ensured {
                try files.ensureDirectory(blobsPath)
                ensured = true
            }
            if try files.publish(
                Array(bytes), as: name, in: blobsPath, temporaryName: "\(name)-\(identifiers.next())",
                keepingExisting: { isBlob(reference, at: $0) })
            {
                report.blobsSent += 1
            }
        }
    }

    /// Whether the file at `path` holds the blob.
    private func isBlob(_ reference: BlobReference, at path: String) -> Bool {
        guard (try? files.size(of: path)) == reference.size, let contents = try? files.contents(of: path) else {
            return false
        }
        return reference.isReferenced(by: Data(contents))
    }
}
