import FolioCore
import Foundation

/// Reads values back from columns, refusing a damaged size or a number out of range with a `corrupt` error instead
/// of trapping: the file may have been altered by anything.
enum ColumnDecoder {
    static func changeHash(_ data: Data) throws(StoreError) -> ChangeHash {
        guard data.count == 32 else {
            throw StoreError(.corrupt, "a stored change hash has \(data.count) bytes, not 32")
        }
        return ChangeHash(data)
    }

    static func contentHash(_ data: Data) throws(StoreError) -> ContentHash {
        guard data.count == 32 else {
            throw StoreError(.corrupt, "a stored content hash has \(data.count) bytes, not 32")
        }
        return ContentHash(bytes: data)
    }

    /// Decodes a change body read from the change table (inflating it first when it is kept deflated).
    static func change(_ stored: Data, document: DocumentID) throws -> Change {
        try Change(checking: StorageCompression.unpackBody(stored), document: document)
    }

    /// A count or lamport timestamp, which SQLite keeps as a signed integer: never negative when the store wrote it.
    static func unsigned(_ value: Int64, _ what: @autoclosure () -> String) throws(StoreError) -> UInt64 {
        guard value >= 0 else { throw StoreError(.corrupt, "a stored \(what()) is \(value), which is negative") }
        return UInt64(value)
    }

    /// A sequence number, which starts at 1.
    static func seq(_ value: Int64, _ what: @autoclosure () -> String) throws(StoreError) -> UInt64 {
        guard value >= 1 else {
            throw StoreError(.corrupt, "a stored \(what()) is \(value); sequence numbers start at 1")
        }
        return UInt64(value)
    }

    static func uuid(_ data: Data) throws(StoreError) -> UUIDBytes {
        guard data.count == 16 else { throw StoreError(.corrupt, "a stored identity has \(data.count) bytes, not 16") }
        return UUIDBytes(data)
    }
}

extension UUIDBytes {
    /// The sixteen bytes as `Data`, for binding.
    var data: Data { withUnsafeBytes { Data($0) } }
}
