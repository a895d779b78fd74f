import FolioCore
import FolioStore
import NIOCore

/// Changes as the columns of `folio_change`, for statements that take a column as an array (`unnest`): a write of
/// thousands of changes is a few statements, not a round trip a change.
struct StoredRows {
    /// The most rows one statement carries: its arrays stay a few megabytes at the server's message limits.
    static let rowsPerStatement = 1_000

    /// A change's identity in a library: its document, its device and its sequence number.
    struct Identity: Hashable {
        var document: ByteBuffer
        var device: ByteBuffer
        var seq: Int64
    }

    /// The columns, one element a change, in the order given.
    let documents: [ByteBuffer]
    let devices: [ByteBuffer]
    let seqs: [Int64]
    let hashes: [ByteBuffer]
    let encoded: [ByteBuffer]
    /// Each change's hash.
    let changes: [ChangeHash]

    init(_ changes: [EncodedChange]) {
        documents = changes.map { ByteBuffer(bytes: $0.change.document.uuid.bytes) }
        devices = changes.map { ByteBuffer(bytes: $0.change.id.device.uuid.bytes) }
        seqs = changes.map { Int64($0.change.id.seq) }
        hashes = changes.map { ByteBuffer(bytes: $0.change.hash.bytes) }
        encoded = changes.map { ByteBuffer(bytes: $0.bytes) }
        self.changes = changes.map(\.change.hash)
    }

    /// The rows' indices.
    var indices: Range<Int> { seqs.indices }

    /// The rows' indices, in statements' worth.
    var chunks: [ArraySlice<Int>] { Self.chunks(of: Array(indices)) }

    /// `indices` in statements' worth.
    static func chunks(of indices: [Int]) -> [ArraySlice<Int>] {
        stride(from: 0, to: indices.count, by: rowsPerStatement).map {
            indices[$0..<min($0 + rowsPerStatement, indices.count)]
        }
    }

    /// The identity of the row at `index`.
    func identity(_ index: Int) -> Identity {
        Identity(document: documents[index], device: devices[index], seq: seqs[index])
    }

    /// The identity columns of the rows at `indices`.
    func identities(_ indices: ArraySlice<Int>) -> (documents: [ByteBuffer], devices: [ByteBuffer], seqs: [Int64]) {
        (indices.map { documents[$0] }, indices.map { devices[$0] }, indices.map { seqs[$0] })
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
