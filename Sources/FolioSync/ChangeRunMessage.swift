import FolioCore

/// Changes of one document in the compact form of a run (message format 3, ``SyncMessage/run(_:)``): the same
/// changes a `changes` message carries, in fewer bytes, with the signed heads that vouch for them.
///
/// A run names the changes before it by identity (device and sequence number), so it is decoded only by a receiver
/// that holds them: its log, its waiting changes and the changes that arrived before the run in the same batch
/// (`decodedChanges(in:lookUp:)`). Decoding rebuilds every change's canonical
/// encoding and recomputes its hash; the changes are then ingested exactly as a `changes` message's are, vouched for
/// by the heads. What a run declares (its change count, its devices, the size of its columns) is checked against
/// ``SyncMessage/Limits`` when the message is decoded and against the receiver's memory bound before the run is,
/// so that a hostile run never causes a large allocation.
public struct ChangeRunMessage: Hashable, Sendable {
    /// The document.
    public let document: DocumentID
    /// The run's bytes (`ChangeRunCodec`'s format 1).
    public let bytes: [UInt8]
    /// The signed heads of the devices with changes in the run, in device order.
    public let heads: [SignedHead]
    /// The number of changes the run declares.
    public let count: Int
    /// The number of devices in the run's table.
    let devices: Int
    /// The bytes the run's columns declare they inflate to.
    let columnBytes: Int

    /// Reads what a run declares from its first bytes, refusing what is beyond ``SyncMessage/Limits``.
    init(document: DocumentID, bytes: [UInt8], heads: [SignedHead]) throws(CodecError) {
        self.init(document: document, bytes: bytes, heads: heads, declared: try Self.declared(bytes))
    }

    init(
        document: DocumentID, bytes: [UInt8], heads: [SignedHead],
        declared: (count: Int, devices: Int, columnBytes: Int)
    ) {
        self.document = document
        self.bytes = bytes
        self.heads = heads
        count = declared.count
        devices = declared.devices
        columnBytes = declared.columnBytes
    }

    /// Encodes `changes` of `document` as a run.
    ///
    /// - Parameter outside: the change with a given hash that is outside the run, from the sender's log.
    package init(
        encoding changes: [Change], of document: DocumentID, heads: [SignedHead],
        outside: (ChangeHash) -> ChangeStamp?
    ) throws(CodecError) {
        try self.init(
            document: document, bytes: ChangeRunCodec.encode(changes, of: document, outside: outside), heads: heads)
    }

    /// The run's declared sizes: its change count, its devices, and the bytes its columns inflate to.
    static func declared(_ bytes: [UInt8]) throws(CodecError) -> (count: Int, devices: Int, columnBytes: Int) {
        // The codec reads the header (format, count, devices, carried stamps, declared length) and checks its own
        // limits; the message's tighter ones follow.
        let declared = try ChangeRunCodec.declared(bytes)
        guard declared.count <= SyncMessage.Limits.runChanges else {
            throw CodecError(
                .oversized, "a run holds 1 to \(SyncMessage.Limits.runChanges) changes, not \(declared.count)", at: 1)
        }
        guard declared.devices <= SyncMessage.Limits.devices else {
            throw CodecError(
                .oversized, "a run names \(declared.devices) devices, more than \(SyncMessage.Limits.devices)", at: 1)
        }
        guard declared.columnBytes <= SyncMessage.Limits.runColumnBytes else {
            throw CodecError(
                .oversized,
                "the run's columns declare \(declared.columnBytes) bytes, more than the limit of \(SyncMessage.Limits.runColumnBytes)",
                at: 1)
        }
        // Every change takes at least a byte in each of its seven fixed columns.
        guard declared.count <= declared.columnBytes / 7 else {
            throw CodecError(
                .truncated, "\(declared.count) changes cannot fit in columns of \(declared.columnBytes) bytes", at: 1)
        }
        return (declared.count, declared.devices + declared.stamps, declared.columnBytes)
    }

    /// An upper bound on the bytes the decoded changes take in memory, for a receiver that knows `knownDevices`
    /// devices outside the run (the devices the vectors of the changes before the run name): a bound per change, per
    /// byte of the columns (a two-byte reference becomes a 32-byte hash, kept in the change and in its encodings),
    /// and per vector entry (a change's vector may name every device the run and the receiver know).
    ///
    /// - Complexity: O(1).
    public func decodedBound(knownDevices: Int) -> Int {
        Self.decodedBound(count: count, devices: devices, knownDevices: knownDevices, columnBytes: columnBytes)
    }

    static func decodedBound(count: Int, devices: Int, knownDevices: Int, columnBytes: Int) -> Int {
        // Each factor is bounded (count ≤ 2^16, devices ≤ 2^16 + 2^20, columns ≤ 2^26): no overflow.
        count * 512 + columnBytes * 64 + count * (devices + knownDevices) * 80
    }

    /// What a receiver holds outside a run that the run may name: its waiting changes and the changes that arrived
    /// before the run in the same batch (its log is looked up as the run names changes), and the devices all these
    /// and its log know.
    package struct Context {
        /// The changes the run may name that are not in the receiver's log, by identity.
        var outside: [ChangeID: ChangeStamp]
        /// The devices the vectors of the changes the run may name can hold.
        package let knownDevices: Int

        /// Gathers what a run may name.
        ///
        /// - Parameters:
        ///   - logDevices: the devices of the receiver's vector of the document.
        ///   - waiting: the receiver's waiting changes of the document.
        ///   - earlier: changes that arrived before the run in the same batch, by identity.
        /// - Complexity: O((waiting + earlier) × devices per vector).
        package init(logDevices: some Sequence<DeviceID>, waiting: [Change], earlier: [ChangeID: ChangeStamp]) {
            var known = Set(logDevices)
            var outside = earlier
            for change in waiting where outside[change.id] == nil { outside[change.id] = ChangeStamp(change) }
            for stamp in outside.values { known.formUnion(stamp.vector.devices) }
            self.outside = outside
            knownDevices = known.count
        }
    }

    /// Decodes the run against what the receiver holds, rebuilding and hashing every change, once its bound
    /// (``decodedBound(knownDevices:)``) is known to be within ``SyncMessage/Limits/runDecodedBytes``.
    ///
    /// - Parameters:
    ///   - context: what the receiver holds outside its log.
    ///   - lookUp: the change with an identity in the receiver's log, `nil` if there is none.
    /// - Throws: `CodecError` when the run does not decode (among others `invalidValue` for a change it names that
    ///   the receiver does not hold, `oversized` when its bound passes the limit), or what `lookUp` throws.
    package func decodedChanges(in context: Context, lookUp: (ChangeID) throws -> Change?) throws -> [EncodedChange] {
        let bound = decodedBound(knownDevices: context.knownDevices)
        guard bound <= SyncMessage.Limits.runDecodedBytes else {
            throw CodecError(
                .oversized,
                "the run of \(count) changes may take \(bound) bytes decoded, more than the limit of \(SyncMessage.Limits.runDecodedBytes)",
                at: 0)
        }
        var failure: (any Error)?
        let changes: [Change]
        do {
            changes = try ChangeRunCodec.decode(bytes, document: document) { id in
                if let stamp = context.outside[id] { return stamp }
                guard failure == nil else { return nil }
                do {
                    return try lookUp(id).map(ChangeStamp.init)
                } catch {
                    failure = error
                    return nil
                }
            }
        } catch {
            if let failure { throw failure }
            throw error
        }
        if let failure { throw failure }
        guard changes.count == count else {
            throw CodecError(.invalidValue, "the run declares \(count) changes and holds \(changes.count)", at: 0)
        }
        return changes.map(EncodedChange.init)
    }
}
