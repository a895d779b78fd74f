import FolioCore
import Foundation

extension TextDocument {
    /// One edit of a text document. Positions and counts are in Unicode scalars.
    ///
    /// Binary form (compact, since the log holds one per keystroke): a tag byte, then for `insert` the position and
    /// the text, for `delete` the position and the count, for `append` and `replace` the text. Positions and counts
    /// are varints, texts are length-prefixed UTF-8, so typing one ASCII character early in a text takes 4 bytes.
    public enum Operation: DocumentOperation, CustomStringConvertible {
        /// Inserts `text` before the scalar at `at` (`at` may equal the length, to insert at the end).
        case insert(at: Int, text: String)
        /// Removes `count` scalars starting at `at`.
        case delete(at: Int, count: Int)
        /// Adds `text` at the end.
        case append(String)
        /// Replaces the whole text.
        case replace(String)

        private enum Tag: UInt8 { case insert = 0, delete = 1, append = 2, replace = 3 }

        /// Appends the operation's binary form.
        public func encode(into writer: inout BinaryWriter) {
            switch self {
            case .insert(let position, let text):
                writer.write(byte: Tag.insert.rawValue)
                writer.write(insertion: text, at: position)
            case .delete(let position, let count):
                writer.write(byte: Tag.delete.rawValue)
                writer.write(deletion: count, at: position)
            case .append(let text):
                writer.write(byte: Tag.append.rawValue)
                writer.write(string: text)
            case .replace(let text):
                writer.write(byte: Tag.replace.rawValue)
                writer.write(string: text)
            }
        }

        /// Reads an operation written by ``encode(into:)`` from untrusted bytes.
        ///
        /// - Throws: `CodecError` when the input ends early, the tag is unknown or a text is not UTF-8.
        public init(from reader: inout BinaryReader) throws {
            let limit = ModelLimits.payloadBytes
            switch try reader.readOperationTag(of: "text") as Tag {
            case .insert:
                let (position, text) = try reader.readInsertion()
                self = .insert(at: position, text: text)
            case .delete:
                let (position, count) = try reader.readDeletion()
                self = .delete(at: position, count: count)
            case .append:
                self = .append(try reader.nextString("an appended text", limit: limit))
            case .replace:
                self = .replace(try reader.nextString("a replacement text", limit: limit))
            }
        }

        /// Decodes a group written by `encodeGroup(_:)`, as the default does, in code specialized for this type: no
        /// generic call per group or per operation.
        ///
        /// - Throws: `CodecError` when the bytes are not such a group.
        public static func decodeGroup(_ data: Data) throws -> [Operation] {
            let result: Result<[Operation], CodecError> = data.withUnsafeBytes { buffer in
                do throws(CodecError) {
                    var reader = BinaryReader(buffer)
                    let count = try reader.nextCount("the operation count", elementSize: 1, limit: 1 << 26)
                    var operations: [Operation] = []
                    // As the default: room for a thousand at most, the array grows with what decodes.
                    operations.reserveCapacity(min(count, 1024))
                    for _ in 0..<count {
                        let start = reader.offset
                        do {
                            operations.append(try Operation(from: &reader))
                        } catch let error as CodecError {
                            throw error
                        } catch {
                            throw CodecError(
                                .invalidValue, "an operation cannot be decoded", cause: error,
                                location: ByteOffset(start))
                        }
                    }
                    guard reader.isAtEnd else {
                        throw CodecError(
                            .trailingBytes, "\(reader.remaining) bytes follow the operations", at: reader.offset)
                    }
                    return .success(operations)
                } catch {
                    return .failure(error)
                }
            }
            return try result.get()
        }

        /// The operation in the scenario files' words, such as `insert "a" at 3`.
        public var description: String {
            switch self {
            case .insert(let position, let text): "insert \(text.debugDescription) at \(position)"
            case .delete(let position, let count): "delete \(count) at \(position)"
            case .append(let text): "append \(text.debugDescription)"
            case .replace(let text): "replace with \(text.debugDescription)"
            }
        }

        /// Whether both are the same operation, with texts equal scalar for scalar (not merely canonically
        /// equivalent: `"é"` and `"e\u{301}"` insert different numbers of scalars): whether their binary forms are
        /// equal.
        public static func == (lhs: Operation, rhs: Operation) -> Bool { lhs.binaryForm == rhs.binaryForm }

        /// Hashes the binary form (consistent with ``==(_:_:)``, which is stricter than `String`'s).
        public func hash(into hasher: inout Hasher) { hasher.combine(binaryForm) }
    }
}
