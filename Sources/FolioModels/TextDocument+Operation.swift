import FolioCore

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
                writer.write(position: position)
                writer.write(string: text)
            case .delete(let position, let count):
                writer.write(byte: Tag.delete.rawValue)
                writer.write(position: position)
                writer.write(position: count)
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
            let offset = reader.offset
            let limit = ModelLimits.payloadBytes
            switch Tag(rawValue: try reader.nextByte("a text operation's tag")) {
            case .insert:
                let position = try reader.readPosition("an insertion's position")
                self = .insert(at: position, text: try reader.nextString("an insertion's text", limit: limit))
            case .delete:
                let position = try reader.readPosition("a deletion's position")
                self = .delete(at: position, count: try reader.readPosition("a deletion's count"))
            case .append:
                self = .append(try reader.nextString("an appended text", limit: limit))
            case .replace:
                self = .replace(try reader.nextString("a replacement text", limit: limit))
            case nil:
                throw CodecError(.invalidValue, "unknown text operation tag", at: offset)
            }
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
        /// equivalent: `"é"` and `"e\u{301}"` insert different numbers of scalars).
        public static func == (lhs: Operation, rhs: Operation) -> Bool {
            switch (lhs, rhs) {
            case (.insert(let p1, let t1), .insert(let p2, let t2)): p1 == p2 && t1.isIdentical(to: t2)
            case (.delete(let p1, let c1), .delete(let p2, let c2)): p1 == p2 && c1 == c2
            case (.append(let t1), .append(let t2)): t1.isIdentical(to: t2)
            case (.replace(let t1), .replace(let t2)): t1.isIdentical(to: t2)
            default: false
            }
        }

        /// Hashes the case and its values (consistent with ``==(_:_:)``, which is stricter than `String`'s).
        public func hash(into hasher: inout Hasher) {
            switch self {
            case .insert(let position, let text):
                hasher.combine(0)
                hasher.combine(position)
                hasher.combine(text)
            case .delete(let position, let count):
                hasher.combine(1)
                hasher.combine(position)
                hasher.combine(count)
            case .append(let text):
                hasher.combine(2)
                hasher.combine(text)
            case .replace(let text):
                hasher.combine(3)
                hasher.combine(text)
            }
        }
    }
}
