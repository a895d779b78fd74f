import FolioCore
import FolioStore
import Foundation

/// What this device last wrote for a document: where, what (a hash of the contents), when (the file's size and
/// modification time, to notice a change cheaply) and the version it was (the head, and the other heads it showed
/// merged with it, if the document showed a silent merge). Kept in the store's local state.
///
/// Format 1 holds the head alone; format 2 (written when there are merged heads) adds them.
struct SavedFileRecord: Equatable {
    var relativePath: String
    var contentsHash: ContentHash
    var size: Int
    var modificationTime: Int64
    var head: ChangeHash
    /// The other heads whose merge with `head` the file holds (none when it holds the state at `head`).
    var merged: [ChangeHash] = []

    static var stateKey: LocalStateKey { LocalStateKey("file") }

    /// The most merged heads a record holds (a damaged record with more reads as none).
    static var mergedLimit: Int { 4096 }

    func encoded() -> Data {
        var writer = BinaryWriter()
        writer.write(byte: merged.isEmpty ? 1 : 2)
        writer.write(string: relativePath)
        writer.write(raw: contentsHash.bytes)
        writer.write(varint: UInt64(size))
        writer.write(signed: modificationTime)
        head.withUnsafeBytes { writer.write(raw: $0) }
        if !merged.isEmpty {
            writer.write(varint: UInt64(merged.count))
            for hash in merged { hash.withUnsafeBytes { writer.write(raw: $0) } }
        }
        return Data(writer.bytes)
    }

    init(
        relativePath: String, contentsHash: ContentHash, size: Int, modificationTime: Int64, head: ChangeHash,
        merged: [ChangeHash] = []
    ) {
        self.relativePath = relativePath
        self.contentsHash = contentsHash
        self.size = size
        self.modificationTime = modificationTime
        self.head = head
        self.merged = merged
    }

    /// Decodes a saved record; a damaged one reads as none (the file is then simply rewritten).
    init?(decoding data: Data?) {
        guard let data else { return nil }
        let record: SavedFileRecord? = data.withUnsafeBytes { buffer in
            do throws(CodecError) {
                var reader = BinaryReader(buffer)
                let format = try reader.nextByte("the record format")
                guard format == 1 || format == 2 else { return nil }
                let path = try reader.nextString("the path", limit: 4096)
                let hash = ContentHash(bytes: try reader.nextRaw(32, "the contents hash"))
                let size = try reader.nextVarint("the size")
                guard size <= UInt64(Int.max) else { return nil }
                let time = try reader.nextSigned("the modification time")
                let head = ChangeHash(try reader.nextBuffer(32, "the head"))
                var merged: [ChangeHash] = []
                if format == 2 {
                    let count = try reader.nextCount("the merged heads", elementSize: 32, limit: Self.mergedLimit)
                    for _ in 0..<count { merged.append(ChangeHash(try reader.nextBuffer(32, "a merged head"))) }
                }
                return reader.isAtEnd
                    ? SavedFileRecord(
                        relativePath: path, contentsHash: hash, size: Int(size), modificationTime: time, head: head,
                        merged: merged)
                    : nil
            } catch {
                return nil
            }
        }
        guard let record else { return nil }
        self = record
    }
}
