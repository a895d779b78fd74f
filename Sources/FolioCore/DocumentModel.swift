import Foundation

/// One operation of a document model, with its own compact binary encoding.
public protocol DocumentOperation: Hashable, Sendable {
    /// Appends the operation's encoding.
    func encode(into writer: inout BinaryWriter)
    /// Reads one operation written by ``encode(into:)`` from untrusted bytes.
    ///
    /// - Throws: ``CodecError`` naming what is wrong.
    init(from reader: inout BinaryReader) throws(CodecError)
}

extension DocumentOperation {
    /// Encodes a group of operations (the payload of one ``Edit``): a count, then each operation.
    public static func encodeGroup(_ operations: [Self]) -> Data {
        var writer = BinaryWriter()
        writer.write(varint: UInt64(operations.count))
        for operation in operations { operation.encode(into: &writer) }
        return Data(writer.bytes)
    }

    /// Decodes a group written by ``encodeGroup(_:)``.
    ///
    /// - Throws: ``CodecError`` when the bytes are not such a group.
    public static func decodeGroup(_ data: Data) throws(CodecError) -> [Self] {
        let result: Result<[Self], CodecError> = data.withUnsafeBytes { buffer in
            do throws(CodecError) {
                var reader = BinaryReader(buffer)
                let count = try reader.readCount("the operation count", elementSize: 1, limit: 1 << 26)
                var operations: [Self] = []
                // The count is bounded by the bytes left (a byte per operation at least), but an operation takes
                // more room in memory than that: reserve for a thousand at most, and let the array grow with what
                // decodes.
                operations.reserveCapacity(min(count, 1024))
                for _ in 0..<count { operations.append(try Self(from: &reader)) }
                guard reader.isAtEnd else {
                    throw CodecError(.trailingBytes, "\(reader.remaining) bytes follow the operations", at: reader.offset)
                }
                return .success(operations)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// Why a model refused contents or an operation.
public struct ModelError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem; more kinds may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable { case invalidContents, invalidOperation }
        private let value: Value
        /// The snapshot cannot be loaded by this model (wrong form, bad encoding, missing members).
        public static let invalidContents = Code(value: .invalidContents)
        /// The operation does not apply to the current state (out of range, unknown record…); nothing changed.
        public static let invalidOperation = Code(value: .invalidOperation)
        /// The code's name.
        public var description: String { value.rawValue }
    }

    /// The kind of problem.
    public var code: Code
    /// What was wrong, as one sentence.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

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
    init(contents: DocumentContents) throws(ModelError)

    /// Takes a snapshot of the state.
    func contents() -> DocumentContents

    /// Applies one operation and returns its inverse (applying the inverse undoes it).
    ///
    /// - Throws: ``ModelError`` `invalidOperation` when it does not apply; the state is then unchanged.
    mutating func apply(_ operation: Operation) throws(ModelError) -> Operation

    /// One operation with the effect of `first` followed by `second`, or `nil` when they do not combine.
    ///
    /// Documents group rapid edits into one change; combining, say, typed characters into one insertion keeps the
    /// log small. The default combines nothing.
    static func combine(_ first: Operation, _ second: Operation) -> Operation?

    /// How this state differs from `ancestor`, for reports and competing versions: lines for a text, fields for
    /// records, members for a package. The default reports the whole contents as changed when they differ.
    func changes(from ancestor: Self) -> [ContentChange]
}

extension DocumentModel {
    /// Combines nothing.
    public static func combine(_ first: Operation, _ second: Operation) -> Operation? { nil }
}

/// A part of a three-way merge that could not be settled automatically.
public struct MergeConflict: Hashable, Sendable, CustomStringConvertible {
    /// Where in the document, such as `line 12`, `r1.name` or `images/cover.png`.
    public var location: String
    /// The common ancestor's value there (`nil` when absent).
    public var base: String?
    /// Each competing version's value there, in the order the versions were given (`nil` when absent).
    public var values: [String?]

    /// Creates a conflict record.
    public init(location: String, base: String?, values: [String?]) {
        self.location = location
        self.base = base
        self.values = values
    }

    /// `location: base → v1 | v2`.
    public var description: String {
        "\(location): \(base ?? "∅") → " + values.map { $0 ?? "∅" }.joined(separator: " | ")
    }
}

/// What a three-way merge produced.
public struct MergeResult<Model: DocumentModel>: Sendable {
    /// The merged state: every part that merged cleanly, and for conflicting parts the first version's value.
    public var merged: Model
    /// The parts still in conflict, for a person to settle; empty when the merge is clean.
    public var conflicts: [MergeConflict]

    /// Creates a result.
    public init(merged: Model, conflicts: [MergeConflict]) {
        self.merged = merged
        self.conflicts = conflicts
    }

    /// Whether everything merged.
    public var isClean: Bool { conflicts.isEmpty }
}

/// A model that can merge competing versions from their common ancestor.
public protocol MergeableDocumentModel: DocumentModel {
    /// Merges `versions` (two or more) made apart from `base`.
    static func merge(base: Self, versions: [Self]) -> MergeResult<Self>
}
