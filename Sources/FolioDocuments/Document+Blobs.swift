import FolioCore
import FolioStore
import Foundation

extension Document {
    /// The members of the document's package that show a blob which has not arrived yet, in path order, with the
    /// blob each waits for; empty when every member is whole (and always for a flat file).
    ///
    /// Such a member reads as its blob's `BlobReference.placeholder` (a pages document's image, for instance,
    /// holds those 56 bytes). It fills in by itself: when the blob arrives, the library's sync brings the document up
    /// to date (``refresh()``), and the member then holds its bytes. Editing the document meanwhile keeps the member
    /// as the same blob; the document is not written to its file until every member is whole (``save()`` defers).
    public var unavailableMembers: [(path: PackagePath, blob: BlobReference)] {
        Self.unavailableMembers(of: model.contents())
    }

    static func unavailableMembers(of contents: DocumentContents) -> [(path: PackagePath, blob: BlobReference)] {
        guard case .package(let package) = contents else { return [] }
        return package.filePaths.compactMap { path in
            guard Model.isBlobMember(path) else { return nil }
            return BlobReference(placeholder: package.files[path]!.contents).map { (path, $0) }
        }
    }

    /// Whether a blob the model shows as unavailable has arrived in the store since: the state is then read again.
    /// The blobs it still waits for are needed: one that was let go (`ChangeLogStore.collectBlobs(of:)`) is asked of
    /// peers again.
    func blobsArrivedForShownMembers() -> Bool {
        guard (try? library.store.refersToBlobs(id)) == true else { return false }
        let waiting = unavailableMembers.map(\.blob)
        guard !waiting.isEmpty else { return false }
        try? library.store.uncollect(waiting)
        return (try? library.store.blobs(waiting).isEmpty) == false
    }
}
