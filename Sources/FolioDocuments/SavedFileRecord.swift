import FolioCore
import FolioStore
import Foundation

/// What this device last wrote for a document: where, what (a hash of the contents), when (the file's size and
/// modification time, to notice a change cheaply) and the version it was (the head). Kept in the store's local state.
struct SavedFileRecord: Equatable {
    var relativePath: String
    var contentsHash: ContentHash
    var size: Int
    var modificationTime: Int64
    var head: ChangeHash

    static var stateKey: LocalStateKey { LocalStateKey("file") }

    func encoded() -> Data {
        var writer = BinaryWriter()
        writer.write(byte: 1)
        writer.write(string: relativePath)
        writer.write(raw: contentsHash.bytes)
        writer.write(varint: UInt64(size))
        writer.write(signed: modificationTime)
        head.withUnsafeBytes { writer.write(raw: $0) }
        return Data(writer.bytes)
    }

    init(relativePath: String, contentsHash: ContentHash, size: Int, modificationTime: Int64, head: ChangeHash) {
        self.relativePath = relativePath
        self.contentsHash = contentsHash
        self.size = size
        self.modificationTime = modificationTime
        self.head = head
    }

    /// Decodes a saved record; a damaged one reads as none (the file is then simply rewritten).
    init?(decoding data: Data?) {
        guard let data else { return nil }
        let record: SavedFileRecord? = data.withUnsafeBytes { buffer in
            do throws(CodecError) {
                var reader = BinaryReader(buffer)
                guard try reader.nextByte("the record format") == 1 else { return nil }
                let path = try reader.nextString("the path", limit: 4096)
                let hash = ContentHash(bytes: try reader.nextRaw(32, "the contents hash"))
                let size = try reader.nextVarint("the size")
                guard size <= UInt64(Int.max) else { return nil }
                let time = try reader.nextSigned("the modification time")
                let head = ChangeHash(try reader.nextBuffer(32, "the head"))
                return reader.isAtEnd
                    ? SavedFileRecord(
                        relativePath: path, contentsHash: hash, size: Int(size), modificationTime: time, head: head)
                    : nil
            } catch {
                return nil
            }
        }
        guard let record else { return nil }
        self = record
    }
}
