import FolioCore
import FolioStore
import NIOCore

/// Changes as the columns of `folio_change`, for statements that take a column as an array (`unnest`): a write of
/// thousands of changes is a few calls, not a round trip a change.
struct StoredRows {
    /// The most rows one statement carries.
    static let rowsPerStatement = 1_000
    /// The most bytes of changes one statement carries (beyond one change, however large): PostgreSQL takes at most
    /// a gigabyte in one array or message.
    static let bytesPerStatement = 32 << 20

    /// The columns, one element a change, in the order given.
    let documents: [ByteBuffer]
    let devices: [ByteBuffer]
    let seqs: [Int64]
    let hashes: [ByteBuffer]
    let encoded: [ByteBuffer]

    init(_ changes: [EncodedChange]) {
        documents = changes.map { ByteBuffer(bytes: $0.change.document.uuid.bytes) }
        devices = changes.map { ByteBuffer(bytes: $0.change.id.device.uuid.bytes) }
        seqs = changes.map { Int64($0.change.id.seq) }
        hashes = changes.map { ByteBuffer(bytes: $0.change.hash.bytes) }
        encoded = changes.map { ByteBuffer(bytes: $0.bytes) }
    }

    /// The rows' indices.
    var indices: Range<Int> { seqs.indices }

    /// The bytes of the changes.
    var byteCount: Int { encoded.reduce(0) { $0 + $1.readableBytes } }

    /// The rows' indices, in statements' worth.
    var chunks: [ArraySlice<Int>] { chunks(of: Array(indices)) }

    /// `indices` in statements' worth: at most ``rowsPerStatement`` rows and ``bytesPerStatement`` bytes each.
    func chunks(of indices: [Int]) -> [ArraySlice<Int>] {
        var chunks: [ArraySlice<Int>] = []
        var start = 0
        var bytes = 0
        for (offset, index) in indices.enumerated() {
            let size = encoded[index].readableBytes
            if offset > start && (offset - start == Self.rowsPerStatement || bytes + size > Self.bytesPerStatement) {
                chunks.append(indices[start..<offset])
                start = offset
                bytes = 0
            }
            bytes += size
        }
        if start < indices.count { chunks.append(indices[start...]) }
        return chunks
    }

    /// Every column of the rows at `indices`.
    func picking(_ indices: ArraySlice<Int>) -> (
        documents: [ByteBuffer], devices: [ByteBuffer], seqs: [Int64], hashes: [ByteBuffer], encoded: [ByteBuffer]
    ) {
        (
            indices.map { documents[$0] }, indices.map { devices[$0] }, indices.map { seqs[$0] },
            indices.map { hashes[$0] }, indices.map { encoded[$0] }
        )
    }
}
