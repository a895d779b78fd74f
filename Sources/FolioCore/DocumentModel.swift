import Foundation

/// The app's model of a document (the part of a UIDocument subclass that holds state): it is created empty, loaded
/// from a snapshot, snapshotted, and changed one operation at a time.
///
/// The state at any set of heads is the replay of the operations in causal order, so `apply` must be a pure
/// function of the state and the operation.
public protocol DocumentModel: Sendable {
    /// The model's operations.
    associatedtype Operation: DocumentOperation

    /// The type of documents this model handles.
    static var documentType: DocumentType { get }

    /// A new, empty document.
    init()

    /// Loads a snapshot taken by ``contents()`` (or a file imported from outside).
    ///
    /// - Throws: ``ModelError`` `invalidContents` when the snapshot is not this model's.
    init(contents: DocumentContents) throws

    /// Takes a snapshot of the state.
    func contents() -> DocumentContents

    /// Applies one operation and returns its inverse (applying the inverse undoes it).
    ///
    /// - Throws: ``ModelError`` `invalidOperation` when it does not apply; the state is then unchanged.
    mutating func apply(_ operation: Operation) throws -> Operation

    /// Applies `operations` in order, as a replay of the log does: an operation that does not apply is skipped, the
    /// state unchanged by it. Returns how many were skipped. The default calls ``apply(_:)`` for each; a model may
    /// apply them in one pass without making the inverses, which a replay does not keep.
    mutating func applyReplayed(_ operations: [Operation]) -> Int

    /// One operation with the effect of `first` followed by `second`, or `nil` when they do not combine.
    ///
    /// Documents group rapid edits into one change; combining, say, typed characters into one insertion keeps the
    /// log small. The default combines nothing.
    static func combine(_ first: Operation, _ second: Operation) -> Operation?

    /// `operations` with each one combined into the one before it wherever ``combine(_:_:)`` combines them, in
    /// order: the result of folding ``combine(_:_:)`` over the list from the front. Documents combine an open group
    /// this way when they commit it, so a model may implement it in one pass (the default calls ``combine(_:_:)``
    /// for each operation).
    static func combined(_ operations: [Operation]) -> [Operation]

    /// How this state differs from `ancestor`, for reports and competing versions: lines for a text, fields for
    /// records, members for a package. The default reports the whole contents as changed when they differ.
    func changes(from ancestor: Self) -> [ContentChange]

    /// The operations that turn this state into `target`, in the order to apply them, or `nil` when the model cannot
    /// express the difference as operations (the default). Restoring an older version (`Document.restore(_:)`)
    /// applies them as an ordinary edit, which merges with concurrent edits and can be undone; a model that returns
    /// `nil` is restored by a baseline of the older contents instead, which cannot be undone.
    func operations(becoming target: Self) -> [Operation]?
    /// Whether the package member at `path` holds bytes the model keeps as they are and never parses (an image, an
    /// attachment). Only such members of at least a library's blob threshold are stored and synced as blobs, and
    /// only they may read as a placeholder (`BlobReference.placeholder`) until their blob arrives: a member the model
    /// parses is always written whole. `false` by default.
    static func isBlobMember(_ path: PackagePath) -> Bool
    /// Whether some member of the model's documents may be a blob (``isBlobMember(_:)``): `false` spares a library
    /// the checks blobs need on every edit. `false` by default.
    static var hasBlobMembers: Bool { get }
}

extension DocumentModel {
    /// Each operation applied by ``apply(_:)``, its inverse dropped.
    public mutating func applyReplayed(_ operations: [Operation]) -> Int {
        var skipped = 0
        for operation in operations {
            do { _ = try apply(operation) } catch { skipped += 1 }
        }
        return skipped
    }

    /// `nil`: the model says nothing about how to reach another state.
    public func operations(becoming target: Self) -> [Operation]? { nil }

    /// No member is a blob.
    public static func isBlobMember(_ path: PackagePath) -> Bool { false }

    /// No member is a blob.
    public static var hasBlobMembers: Bool { false }

    /// Combines nothing.
    public static func combine(_ first: Operation, _ second: Operation) -> Operation? { nil }

    /// Folds ``combine(_:_:)`` over `operations` from the front.
    public static func combined(_ operations: [Operation]) -> [Operation] {
        var result: [Operation] = []
        result.reserveCapacity(operations.count)
        for operation in operations {
            if let last = result.last, let together = combine(last, operation) {
                result[result.count - 1] = together
            } else {
                result.append(operation)
            }
        }
        return result
    }
}
