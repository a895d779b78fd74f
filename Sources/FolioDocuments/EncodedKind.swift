import FolioCore
import FolioStore
import Foundation

/// A change's kind as a library writes it: package members and images of at least the library's
/// ``DocumentLibrary/blobThreshold`` as blob references, with the blobs it refers to and their bytes.
struct EncodedKind {
    var kind: ChangeKind
    /// The blobs the kind's encoding refers to.
    var blobs: [BlobReference] = []
    /// The bytes of those blobs this device has (a placeholder written again has none).
    var bytes: [BlobReference: Data] = [:]

    /// A kind that refers to no blob.
    init(_ kind: ChangeKind) {
        self.kind = kind
    }

    init(_ kind: ChangeKind, writtenBy writer: BinaryWriter) {
        self.kind = kind
        blobs = writer.blobReferences
        bytes = writer.blobBytes
    }
}

extension DocumentLibrary {
    /// A writer that writes large members as blob references, as the library's changes do: those `Model` keeps as
    /// opaque bytes (`DocumentModel.isBlobMember(_:)`), within what a peer takes (the store's bounds, and what one
    /// sync message carries).
    func blobWriter<Model: DocumentModel>(for model: Model.Type) -> BinaryWriter {
        var writer = BinaryWriter()
        // A model without blob members writes placeholders as references and nothing else (it holds none).
        guard Model.hasBlobMembers else { return writer }
        writer.blobThreshold = blobThreshold
        writer.blobSizeLimit = min(store.limits.blobBytes, BlobReference.largestSynced)
        writer.blobCountLimit = store.limits.blobsPerChange
        writer.blobMembers = { Model.isBlobMember($0) }
        return writer
    }

    /// An edit of `Model`'s `operations`.
    func editKind<Model: DocumentModel>(
        _ operations: [Model.Operation], of model: Model.Type, intent: Edit.Intent = .edit
    ) -> EncodedKind {
        var writer = blobWriter(for: model)
        Model.Operation.encodeGroup(operations, into: &writer)
        return EncodedKind(.edit(Edit(operations: Data(writer.bytes), intent: intent)), writtenBy: writer)
    }

    /// Refuses operations whose encoding would refer to a blob a peer refuses: a placeholder (bytes that stand for a
    /// blob, `BlobReference.placeholder`) that came from outside and names a blob beyond the bounds.
    ///
    /// - Throws: ``DocumentError`` `.invalidOperation`.
    func checkBlobBounds<Model: DocumentModel>(of operations: [Model.Operation], in model: Model.Type)
        throws(DocumentError)
    {
        // A model without blob members never writes a reference: nothing to check (a keystroke pays nothing).
        guard Model.hasBlobMembers else { return }
        var writer = blobWriter(for: model)
        Model.Operation.encodeGroup(operations, into: &writer)
        let largest = min(store.limits.blobBytes, BlobReference.largestSynced)
        if let blob = writer.blobReferences.first(where: { $0.size > largest }) {
            throw DocumentError(
                .invalidOperation,
                "the edit's bytes stand for a \(blob), larger than the limit of \(largest) bytes: refused")
        }
        guard writer.blobReferences.count <= store.limits.blobsPerChange else {
            throw DocumentError(
                .invalidOperation,
                "the edit would refer to \(writer.blobReferences.count) blobs, more than the limit of \(store.limits.blobsPerChange): refused"
            )
        }
    }

    /// A baseline of `contents`, `Model`'s.
    func baselineKind<Model: DocumentModel>(_ contents: DocumentContents, of model: Model.Type) -> EncodedKind {
        var writer = blobWriter(for: model)
        contents.encode(into: &writer)
        return EncodedKind(.baseline(contents: Data(writer.bytes)), writtenBy: writer)
    }

    /// `kind`, of a `Model` document, as the library writes it: the contents of a baseline or a resolution written
    /// again with large blob members as blob references (contents that do not decode, or a flat file, stay as they
    /// are); any other kind as it is.
    func written<Model: DocumentModel>(_ kind: ChangeKind, of model: Model.Type) -> EncodedKind {
        func rewritten(_ contents: Data) -> (Data, BinaryWriter)? {
            // Even without a threshold: placeholders of blobs that have not arrived are written as references.
            guard case .package(let package)? = try? DocumentContents(decoding: contents) else { return nil }
            var writer = blobWriter(for: model)
            DocumentContents.package(package).encode(into: &writer)
            return writer.blobReferences.isEmpty ? nil : (Data(writer.bytes), writer)
        }
        switch kind {
        case .baseline(let contents):
            guard let (bytes, writer) = rewritten(contents) else { return EncodedKind(kind) }
            return EncodedKind(.baseline(contents: bytes), writtenBy: writer)
        case .resolution(let resolution):
            guard let contents = resolution.contents, let (bytes, writer) = rewritten(contents) else {
                return EncodedKind(kind)
            }
            let written = Resolution(
                strategy: resolution.strategy, chosen: resolution.chosen, discarded: resolution.discarded,
                contents: bytes)
            return EncodedKind(.resolution(written), writtenBy: writer)
        case .edit, .lifecycle:
            return EncodedKind(kind)
        }
    }

    /// Appends `kinds` through the store (``ChangeLogStore/append(_:to:on:author:blobs:blobBytes:localState:unpublished:)``),
    /// with the blobs they refer to and the bytes of those this device has, in one transaction.
    @discardableResult
    func append(
        _ kinds: [EncodedKind], to document: DocumentID, on parents: ParentChoice = .allHeads, author: Device? = nil,
        localState: (([Change]) -> [LocalStateKey: Data])? = nil, unpublished: Bool? = nil
    ) throws(StoreError) -> [Change] {
        // What a peer refuses is refused here: a placeholder from outside (an imported file's member, an app's
        // bytes) may name a blob beyond the bounds, and a change that refers to it would stop the library's sync.
        let largest = min(store.limits.blobBytes, BlobReference.largestSynced)
        for kind in kinds {
            if let blob = kind.blobs.first(where: { $0.size > largest }) {
                throw StoreError(
                    .invalidChange, "the change would refer to a \(blob), larger than the limit of \(largest) bytes")
            }
            guard kind.blobs.count <= store.limits.blobsPerChange else {
                throw StoreError(
                    .invalidChange,
                    "the change would refer to \(kind.blobs.count) blobs, more than the limit of \(store.limits.blobsPerChange)"
                )
            }
        }
        let refers = kinds.contains { !$0.blobs.isEmpty }
        var bytes: [BlobReference: Data] = [:]
        for kind in kinds { bytes.merge(kind.bytes) { first, _ in first } }
        return try store.append(
            kinds.map(\.kind), to: document, on: parents, author: author, blobs: refers ? kinds.map(\.blobs) : [],
            blobBytes: bytes, localState: localState, unpublished: unpublished)
    }
}
