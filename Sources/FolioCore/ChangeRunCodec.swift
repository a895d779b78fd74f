import Foundation

/// What a run of changes may name outside itself: a change's identity, hash, lamport timestamp and vector.
///
/// A compact run refers to a parent by its identity; the hash, lamport timestamp and vector it needs to rebuild the
/// change that names the parent come from the run itself or, for a parent outside the run, from the log that holds
/// it.
package struct ChangeStamp: Sendable, Equatable {
    /// The change's identity.
    package var id: ChangeID
    /// Its hash.
    package var hash: ChangeHash
    /// Its lamport timestamp.
    package var lamport: UInt64
    /// Its vector.
    package var vector: VersionVector

    /// A stamp of the given fields.
    package init(id: ChangeID, hash: ChangeHash, lamport: UInt64, vector: VersionVector) {
        self.id = id
        self.hash = hash
        self.lamport = lamport
        self.vector = vector
    }

    /// The stamp of `change`.
    package init(_ change: Change) {
        id = change.id
        hash = change.hash
        lamport = change.lamport
        vector = change.vector
    }
}

/// The compact, columnar encoding of a run of changes of one document: how the store keeps its older history and
/// how a peer may send a long run at once. `docs/compact-history.md` describes the format and why it is safe.
///
/// Every field of every change is either stored or predicted from the changes before it, and stored only where the
/// prediction misses: the device (a small index into the run's device table), the sequence number (predicted: the
/// device's previous one plus one), the lamport timestamp (the highest of the parents' plus one), the wall time (as a
/// difference from the previous change's), the parents (the previous change of the run), the vector (the parents'
/// vectors joined, with the change itself). A plain edit's operations go to one column and everything else a change
/// says to another, and the columns are deflated together. Decoding rebuilds each change's canonical encoding and
/// recomputes its hash, so a run names the same changes, hash for hash, as the rows it replaces; it never carries a
/// hash of its own.
///
/// Layout (varints are unsigned LEB128 in shortest form; "signed" is a zigzag varint):
///
/// ```
/// u8       format (1)
/// varint   change count (at least 1)
/// varint   device count, then 16 B per device, each once
/// varint   outside stamp count, then per stamp: varint device index, varint seq, 32 B hash, varint lamport,
///          varint vector entry count, (varint device index, varint seq) per entry
/// varint   the length of the columns, then the columns as one zlib stream, each column a varint length and bytes:
///   device       varint index into the device table, per change
///   seq          varint seq − (the device's previous seq in the run, or 0) − 1, per change
///   lamport      signed lamport − (the highest parent lamport + 1, or 1 without parents), per change
///   wall time    signed difference from the previous change's wall time (the first: from 0), per change
///   parents      varint 0: the previous change of the run; n > 0: n − 1 references (see below), per change
///   vector       varint 0: the joined parents' vectors with the change itself; n > 0: n − 1 entries of
///                (varint device index, varint seq)
///   kind         u8, per change: the form the change's kind takes in the columns that follow
///   op lengths, operations, other kinds, resolutions, text edits, text tags, text positions, text lengths, text
///                see `ChangeRunCodec+Kinds.swift`
/// ```
///
/// The outside stamps, when a run carries them (the store's segments do; see ``encode(_:of:embeddingOutside:outside:)``),
/// are those of the changes outside the run it names, so that it decodes without the changes before it; a reader's
/// own `outside` lookup is asked first.
///
/// A reference is a varint device index and a varint `r`: when `r` is even, the seq is the device's latest seq so far
/// in the run minus `r / 2`; when odd, the seq is `(r − 1) / 2`.
package enum ChangeRunCodec {
    /// The newest format this build writes and reads: 2, which adds the forms of edits made on a merge
    /// (`Edit.isMadeOnMerge`). A run without such an edit is written as format 1, which every reader of format 1
    /// reads as before; this build reads both.
    package static let formatVersion: UInt8 = 2
    /// The formats this build reads.
    package static let readableFormats: ClosedRange<UInt8> = 1...2

    /// Bounds on what a run may declare, so that hostile bytes cannot cause large allocations.
    package enum Limits {
        /// The most changes in one run.
        package static let changes = 1 << 20
        /// The most devices a run names.
        package static let devices = 1 << 16
        /// The most bytes a run's columns inflate to.
        package static let columnBytes = 1 << 30
    }

    enum Column: Int, CaseIterable {
        case device, seq, lamport, wallTime, parents, vector, kind, opLengths, operations, otherKinds
        case resolutions, textEdits, textTags, textPositions, textLengths, text
    }

    // MARK: Encoding

    /// Encodes `changes`, which belong to `document`, are in an order where every change comes after the parents it
    /// names from the run, and name parents outside the run only through `outside`.
    ///
    /// - Parameter outside: the stamp of a change outside the run, by hash; `nil` if there is none.
    /// - Throws: ``CodecError`` (`invalidValue`) when the run is empty, a change belongs to another document, or a
    ///   parent is neither earlier in the run nor found by `outside`.
    package static func encode(
        _ changes: [Change], of document: DocumentID, embeddingOutside: Bool = false,
        outside: (ChangeHash) -> ChangeStamp?
    ) throws(CodecError) -> [UInt8] {
        guard !changes.isEmpty else { throw CodecError(.invalidValue, "a run holds at least one change", at: 0) }
        var encoder = RunEncoder(capacity: changes.count)
        for change in changes {
            guard change.document == document else {
                throw CodecError(.invalidValue, "change \(change.id) belongs to another document", at: 0)
            }
            try encoder.append(change, outside: outside)
        }
        var payload = BinaryWriter(capacity: encoder.columns.reduce(16) { $0 + $1.bytes.count + 5 })
        for column in encoder.columns { payload.write(lengthPrefixed: column.bytes) }
        // The outside stamps, in identity order; their devices join the table before it is written.
        let embedded = embeddingOutside ? encoder.usedOutside.values.sorted { $0.id < $1.id } : []
        var stamps = BinaryWriter(capacity: embedded.count * 48)
        stamps.write(varint: UInt64(embedded.count))
        for stamp in embedded {
            stamps.write(varint: UInt64(encoder.devices.index(of: stamp.id.device)))
            stamps.write(varint: stamp.id.seq)
            stamp.hash.withUnsafeBytes { stamps.write(raw: $0) }
            stamps.write(varint: stamp.lamport)
            stamps.write(varint: UInt64(stamp.vector.entries.count))
            for entry in stamp.vector.entries {
                stamps.write(varint: UInt64(encoder.devices.index(of: entry.device)))
                stamps.write(varint: entry.seq)
            }
        }
        var output = BinaryWriter(capacity: 64 + encoder.devices.ids.count * 16 + stamps.bytes.count)
        output.write(byte: encoder.usesMergeForms ? formatVersion : 1)
        output.write(varint: UInt64(changes.count))
        output.write(varint: UInt64(encoder.devices.ids.count))
        for id in encoder.devices.ids {
            output.write(fixed: id.uuid.high)
            output.write(fixed: id.uuid.low)
        }
        output.write(raw: stamps.bytes)
        output.write(varint: UInt64(payload.bytes.count))
        output.write(raw: Deflate.compressed(payload.bytes))
        return output.bytes
    }

    /// The state of one encode: the columns so far, and what predictions need.
    struct RunEncoder {
        var devices = DeviceTable()
        var columns: [BinaryWriter]
        var inRun: [ChangeHash: ChangeStamp] = [:]
        var latestSeq: [Int: UInt64] = [:]
        var latestLamport: [Int: UInt64] = [:]
        var textEnd: [Int: Int64] = [:]
        var previous: Change?
        /// Whether an edit made on a merge was written (format 2's forms).
        var usesMergeForms = false

        init(capacity: Int) {
            columns = [BinaryWriter](repeating: BinaryWriter(capacity: capacity * 2), count: Column.allCases.count)
            inRun.reserveCapacity(capacity)
        }

        /// The stamps of the changes outside the run that the run names, by identity.
        var usedOutside: [ChangeID: ChangeStamp] = [:]

        mutating func stamp(_ hash: ChangeHash, outside: (ChangeHash) -> ChangeStamp?) -> ChangeStamp? {
            if let found = inRun[hash] { return found }
            guard let found = outside(hash) else { return nil }
            usedOutside[found.id] = found
            return found
        }

        /// Writes a reference to `id` to `column`.
        mutating func write(reference id: ChangeID, to column: Column) {
            let index = devices.index(of: id.device)
            columns[column].write(varint: UInt64(index))
            columns[column].write(varint: ChangeRunCodec.reference(id.seq, latest: latestSeq[index]))
        }

        mutating func append(_ change: Change, outside: (ChangeHash) -> ChangeStamp?) throws(CodecError) {
            let device = devices.index(of: change.id.device)
            columns[.device].write(varint: UInt64(device))
            columns[.seq].write(varint: change.id.seq &- (latestSeq[device] ?? 0) &- 1)

            var parentStamps: [ChangeStamp] = []
            parentStamps.reserveCapacity(change.parents.count)
            for parent in change.parents {
                guard let stamp = stamp(parent, outside: outside) else {
                    throw CodecError(
                        .invalidValue,
                        "change \(change.id) names parent \(parent.shortHex), which is neither earlier in the run nor known",
                        at: 0)
                }
                parentStamps.append(stamp)
            }
            let predictedLamport = ChangeRunCodec.predictedLamport(
                parents: parentStamps, devicePrevious: latestLamport[device])
            columns[.lamport].write(signed: Int64(bitPattern: change.lamport &- predictedLamport))
            columns[.wallTime].write(
                signed: change.wallTime.millisecondsSince1970 &- (previous?.wallTime.millisecondsSince1970 ?? 0))

            if let previous, change.parents == [previous.hash] {
                columns[.parents].write(varint: 0)
            } else {
                columns[.parents].write(varint: UInt64(change.parents.count) + 1)
                for stamp in parentStamps { write(reference: stamp.id, to: .parents) }
            }

            if change.vector == ChangeRunCodec.predictedVector(of: change.id, parents: parentStamps) {
                columns[.vector].write(varint: 0)
            } else {
                columns[.vector].write(varint: UInt64(change.vector.entries.count) + 1)
                for entry in change.vector.entries {
                    columns[.vector].write(varint: UInt64(devices.index(of: entry.device)))
                    columns[.vector].write(varint: entry.seq)
                }
            }

            appendKind(of: change, device: device, parents: parentStamps, outside: outside)

            latestSeq[device] = change.id.seq
            latestLamport[device] = change.lamport
            inRun[change.hash] = ChangeStamp(change)
            previous = change
        }
    }

    /// The lamport timestamp a change takes when nothing but its parents and its device's previous change in the run
    /// decide it: one more than the highest of theirs.
    static func predictedLamport(parents: [ChangeStamp], devicePrevious: UInt64?) -> UInt64 {
        var highest = devicePrevious ?? 0
        for parent in parents where parent.lamport > highest { highest = parent.lamport }
        return highest &+ 1
    }

    /// The vector a change has when it names nothing but its parents' pasts: their vectors joined, and itself.
    static func predictedVector(of id: ChangeID, parents: [ChangeStamp]) -> VersionVector {
        var vector = parents.first?.vector ?? VersionVector()
        for parent in parents.dropFirst() { vector.merge(parent.vector) }
        vector.include(id)
        return vector
    }

    static func reference(_ seq: UInt64, latest: UInt64?) -> UInt64 {
        if let latest, seq <= latest, latest - seq <= UInt64.max >> 2 { return (latest - seq) << 1 }
        return seq << 1 | 1
    }

    /// The devices a run names, each with a small index, in the order they first appear.
    struct DeviceTable {
        var ids: [DeviceID] = []
        var indexes: [DeviceID: Int] = [:]

        mutating func index(of device: DeviceID) -> Int {
            if let index = indexes[device] { return index }
            indexes[device] = ids.count
            ids.append(device)
            return ids.count - 1
        }
    }
}

extension [BinaryWriter] {
    /// The column's writer.
    subscript(_ column: ChangeRunCodec.Column) -> BinaryWriter {
        get { self[column.rawValue] }
        set { self[column.rawValue] = newValue }
    }
}

extension [BinaryReader] {
    /// The column's reader.
    subscript(_ column: ChangeRunCodec.Column) -> BinaryReader {
        get { self[column.rawValue] }
        set { self[column.rawValue] = newValue }
    }
}
