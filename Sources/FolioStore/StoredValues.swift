import FolioCore
import Foundation

/// Reads fixed-size values back from blob columns, refusing a damaged size with a `corrupt` error instead of
/// trapping: the file may have been altered by anything.
enum Stored {
    static func changeHash(_ data: Data) throws(StoreError) -> ChangeHash {
        guard data.count == 32 else { throw StoreError(.corrupt, "a stored change hash has \(data.count) bytes, not 32") }
        return ChangeHash(data)
    }

    static func contentHash(_ data: Data) throws(StoreError) -> ContentHash {
        guard data.count == 32 else { throw StoreError(.corrupt, "a stored content hash has \(data.count) bytes, not 32") }
        return ContentHash(bytes: data)
    }

    /// Decodes a change body read from the change table (inflating it first when it is kept deflated).
    static func change(_ stored: Data, document: DocumentID) throws -> Change {
        try Change(decoding: AtRest.unpackBody(stored), document: document)
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
