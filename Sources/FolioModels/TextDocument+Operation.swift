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
