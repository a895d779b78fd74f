import FolioCore
import Foundation

extension PagesDocument {
    /// One edit of a pages document. Positions and counts in the text are in Unicode scalars.
    ///
    /// Binary form: a tag byte, then for `setText` the text, for `putImage` the name and the bytes (or, under a tag
    /// of its own, a blob reference, when the writer externalizes them: `BinaryWriter.externalize(_:)`), for
    /// `removeImage` the name, for `insertText` the position and the text, for `deleteText` the position and the
    /// count; texts and names are length-prefixed UTF-8, bytes are length-prefixed, positions and counts are varints
    /// (as in a ``TextDocument/Operation``).
    public enum Operation: DocumentOperation, CustomStringConvertible {
        /// Inserts `text` before the text's scalar at `at` (`at` may equal the length, to insert at the end).
        case insertText(at: Int, text: String)
        /// Removes `count` scalars of the text starting at `at`.
        case deleteText(at: Int, count: Int)
        /// Replaces the text.
        case setText(String)
        /// Adds the image `name`, or replaces its bytes; `name` must be a valid image name
        /// (``PagesDocument/isValidImageName(_:)``).
        case putImage(name: String, bytes: Data)
        /// Removes the image `name`, which must exist.
        case removeImage(name: String)

        // The first three tags are those of the first logs; new operations take new tags. `putImageBlob` is a
        // `putImage` whose bytes are a blob reference (written when the writer externalizes them).
        private enum Tag: UInt8 {
            case setText = 0, putImage = 1, removeImage = 2, insertText = 3, deleteText = 4, putImageBlob = 5
        }

        /// Appends the operation's binary form.
        public func encode(into writer: inout BinaryWriter) {
            switch self {
            case .setText(let text):
                writer.write(byte: Tag.setText.rawValue)
                writer.write(string: text)
            case .putImage(let name, let bytes):
                if let reference = writer.externalize(bytes) {
                    writer.write(byte: Tag.putImageBlob.rawValue)
                    writer.write(string: name)
                    writer.write(reference)
                } else {
                    writer.write(byte: Tag.putImage.rawValue)
                    writer.write(string: name)
                    writer.write(lengthPrefixed: bytes)
                }
            case .removeImage(let name):
                writer.write(byte: Tag.removeImage.rawValue)
                writer.write(string: name)
            case .insertText(let position, let text):
                writer.write(byte: Tag.insertText.rawValue)
                writer.write(insertion: text, at: position)
            case .deleteText(let position, let count):
                writer.write(byte: Tag.deleteText.rawValue)
                writer.write(deletion: count, at: position)
            }
        }

        /// Reads an operation written by ``encode(into:)`` from untrusted bytes.
        ///
        /// Image names are not validated here, and positions and counts decode to any `Int`
        /// (``PagesDocument/apply(_:)`` refuses invalid names and positions or counts outside the text), so every
        /// encoded operation decodes back to itself.
        ///
        /// - Throws: `CodecError` when the input ends early, the tag is unknown, a varint is malformed, a length is
        ///   over its limit or a text is not UTF-8.
        public init(from reader: inout BinaryReader) throws {
            switch try reader.readOperationTag(of: "pages") as Tag {
            case .setText:
                self = .setText(try reader.nextString("the pages' text", limit: ModelLimits.payloadBytes))
            case .putImage:
                let name = try reader.nextString("an image name", limit: ModelLimits.nameBytes)
                let offset = reader.offset
                let bytes = try reader.nextLengthPrefixed("the image's bytes", limit: ModelLimits.payloadBytes)
                // A placeholder is written as its reference (tag 5): as bytes, it is another form of the same group.
                guard BlobReference(placeholder: bytes) == nil else {
                    throw CodecError(.notCanonical, "a blob's placeholder written as an image's bytes", at: offset)
                }
                self = .putImage(name: name, bytes: bytes)
            case .putImageBlob:
                let name = try reader.nextString("an image name", limit: ModelLimits.nameBytes)
                self = .putImage(
                    name: name, bytes: reader.blob(try reader.nextBlobReference(limit: ModelLimits.payloadBytes)))
            case .removeImage:
                self = .removeImage(name: try reader.nextString("an image name", limit: ModelLimits.nameBytes))
            case .insertText:
                let (position, text) = try reader.readInsertion()
                self = .insertText(at: position, text: text)
            case .deleteText:
                let (position, count) = try reader.readDeletion()
                self = .deleteText(at: position, count: count)
            }
        }

        /// The operation in the scenario files' words, such as `putImage cover.png (1024 bytes)` or `insert "a" at 3`.
        public var description: String {
            switch self {
            case .insertText(let position, let text): "insert \(text.debugDescription) at \(position)"
            case .deleteText(let position, let count): "delete \(count) at \(position)"
            case .setText(let text): "setText \(text.debugDescription)"
            case .putImage(let name, let bytes): "putImage \(name) (\(bytes.count) bytes)"
            case .removeImage(let name): "removeImage \(name)"
            }
        }

        /// Whether both are the same operation, with texts and names equal scalar for scalar: whether their binary
        /// forms are equal.
        public static func == (lhs: Operation, rhs: Operation) -> Bool { lhs.binaryForm == rhs.binaryForm }

        /// Hashes the binary form (consistent with ``==(_:_:)``, which is stricter than `String`'s).
        public func hash(into hasher: inout Hasher) { hasher.combine(binaryForm) }
    }
}
