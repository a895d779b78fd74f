import Foundation

/// Decoding a run: its header (format, count, devices, the stamps it carries, the inflated columns) and its
/// changes, each rebuilt from its predictions and columns, with its canonical encoding and hash recomputed.
extension ChangeRunCodec {
    /// Decodes a run written by ``encode(_:of:outside:)`` from untrusted bytes, rebuilding each change's canonical
    /// encoding and hash.
    ///
    /// - Parameter outside: the stamp of a change outside the run, by identity; `nil` if there is none.
    /// - Throws: ``CodecError`` naming what is wrong: truncated or oversized columns, an unknown tag, a reference to a
    ///   change that is neither earlier in the run nor known, a change the change encoding would refuse (a vector
    ///   that does not name the change, a repeated parent, a counter out of bounds), trailing bytes.
    package static func decode(
        _ bytes: some ContiguousBytes, document: DocumentID, outside: (ChangeID) -> ChangeStamp?
    ) throws(CodecError) -> [Change] {
        let header: Result<Header, CodecError> = bytes.withUnsafeBytes { buffer in
            do throws(CodecError) {
                return .success(try readHeader(buffer))
            } catch {
                return .failure(error)
            }
        }
        let (format, count, devices, embedded, payload, _) = try header.get()
        let decoded: Result<[Change], CodecError> = payload.withUnsafeBytes { buffer in
            do throws(CodecError) {
                var reader = BinaryReader(buffer)
                var columns: [BinaryReader] = []
                var starts: [Int] = []
                for column in Column.allCases {
                    starts.append(reader.offset)
                    let length = try reader.nextCount(
                        "the length of column \(column)", elementSize: 1, limit: Limits.columnBytes)
                    columns.append(BinaryReader(try reader.nextBuffer(length, "column \(column)")))
                }
                guard reader.isAtEnd else {
                    throw CodecError(.trailingBytes, "\(reader.remaining) bytes follow the columns", at: reader.offset)
                }
                var decoder = RunDecoder(
                    document: document, format: format, devices: devices, columns: columns, starts: starts)
                let changes = try decoder.decode(count: count) { outside($0) ?? embedded[$0] }
                guard format < 2 || decoder.sawMergeForm else {
                    throw CodecError(.notCanonical, "a run of format 2 holds no edit made on a merge", at: 0)
                }
                for (index, column) in decoder.columns.enumerated() where !column.isAtEnd {
                    throw CodecError(
                        .trailingBytes, "\(column.remaining) bytes are left in column \(Column.allCases[index])",
                        at: starts[index] + column.offset)
                }
                return .success(changes)
            } catch {
                return .failure(error)
            }
        }
        return try decoded.get()
    }

    /// The stamps of outside changes that a run carries (see ``encode(_:of:embeddingOutside:outside:)``), by hash,
    /// read from its header without decoding its changes.
    ///
    /// - Throws: ``CodecError`` when the header does not decode.
    package static func carriedStamps(_ bytes: some ContiguousBytes) throws(CodecError) -> [ChangeHash: ChangeStamp] {
        let result: Result<[ChangeHash: ChangeStamp], CodecError> = bytes.withUnsafeBytes { buffer in
            do throws(CodecError) {
                let header = try readHeader(buffer)
                return .success(Dictionary(header.embedded.values.map { ($0.hash, $0) }) { first, _ in first })
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private typealias Header = (
        format: UInt8, count: Int, devices: [DeviceID], embedded: [ChangeID: ChangeStamp], columns: [UInt8],
        columnBytes: Int
    )

    /// What a run declares before its columns are inflated: its change count, its devices, the outside stamps it
    /// carries and the bytes its columns inflate to, each checked against ``Limits`` (so that a receiver can bound
    /// what decoding it would take before it does).
    ///
    /// - Throws: ``CodecError`` when the header does not decode.
    package static func declared(_ bytes: some ContiguousBytes) throws(CodecError) -> (
        count: Int, devices: Int, stamps: Int, columnBytes: Int
    ) {
        let result: Result<Header, CodecError> = bytes.withUnsafeBytes { buffer in
            do throws(CodecError) {
                return .success(try readHeader(buffer, inflating: false))
            } catch {
                return .failure(error)
            }
        }
        let header = try result.get()
        return (header.count, header.devices.count, header.embedded.count, header.columnBytes)
    }

    private static func readHeader(_ buffer: UnsafeRawBufferPointer, inflating: Bool = true) throws(CodecError)
        -> Header
    {
        var reader = BinaryReader(buffer)
        let version = try reader.nextByte("the run's format version")
        guard readableFormats.contains(version) else {
            throw CodecError(
                .unsupportedVersion,
                "run format \(version) is not supported (this build reads formats \(readableFormats.lowerBound) to "
                    + "\(readableFormats.upperBound))", at: 0)
        }
        let countOffset = reader.offset
        // Every change takes at least a byte in its kind column, so the inflated columns bound the count.
        let count = try reader.nextVarint("the number of changes")
        guard count >= 1, count <= UInt64(Limits.changes) else {
            throw CodecError(
                .oversized, "a run holds 1 to \(Limits.changes) changes, not \(count)", at: countOffset)
        }
        let deviceCount = try reader.nextCount("the number of devices", elementSize: 16, limit: Limits.devices)
        var devices: [DeviceID] = []
        devices.reserveCapacity(deviceCount)
        var seen = Set<DeviceID>()
        for _ in 0..<deviceCount {
            let offset = reader.offset
            let device = DeviceID(
                UUIDBytes(high: try reader.nextFixed("a device"), low: try reader.nextFixed("a device")))
            guard seen.insert(device).inserted else {
                throw CodecError(.notCanonical, "device \(device) appears twice in the run's table", at: offset)
            }
            devices.append(device)
        }
        let embedded = try readStamps(&reader, devices: devices)
        let lengthOffset = reader.offset
        let length = try reader.nextVarint("the length of the columns")
        guard length <= UInt64(Limits.columnBytes) else {
            throw CodecError(
                .oversized, "the columns declare \(length) bytes, more than the limit of \(Limits.columnBytes)",
                at: lengthOffset)
        }
        if !inflating { return (version, Int(count), devices, embedded, [], Int(length)) }
        let streamOffset = reader.offset
        let stream = try reader.nextBuffer(reader.remaining, "the columns")
        guard let columns = Deflate.inflated(stream, length: Int(length)) else {
            throw CodecError(
                .invalidValue, "the columns are not a zlib stream of the \(length) bytes declared", at: streamOffset)
        }
        guard UInt64(columns.count) >= count else {
            throw CodecError(.truncated, "\(count) changes cannot fit in \(columns.count) bytes", at: countOffset)
        }
        return (version, Int(count), devices, embedded, columns, Int(length))
    }

    /// Reads the stamps of outside changes a run carries (a varint count, then per stamp a device index, a seq, the
    /// 32-byte hash, the lamport timestamp and the vector as a count and (device index, seq) entries).
    private static func readStamps(_ reader: inout BinaryReader, devices: [DeviceID]) throws(CodecError)
        -> [ChangeID: ChangeStamp]
    {
        // A stamp takes at least 36 bytes.
        let count = try reader.nextCount("the number of outside stamps", elementSize: 36, limit: Limits.changes)
        var stamps: [ChangeID: ChangeStamp] = [:]
        func device(_ what: String) throws(CodecError) -> DeviceID {
            let offset = reader.offset
            let index = try reader.nextVarint(what)
            guard index < UInt64(devices.count) else {
                throw CodecError(.invalidValue, "\(what) is device \(index) of a table of \(devices.count)", at: offset)
            }
            return devices[Int(index)]
        }
        func counter(_ what: String) throws(CodecError) -> UInt64 {
            let offset = reader.offset
            let value = try reader.nextVarint(what)
            guard value >= 1, value <= ChangeLimits.counter else {
                throw CodecError(.invalidValue, "\(what) is \(value), outside 1…\(ChangeLimits.counter)", at: offset)
            }
            return value
        }
        for _ in 0..<count {
            let offset = reader.offset
            let id = ChangeID(
                device: try device("an outside stamp's device"), seq: try counter("an outside stamp's seq"))
            let hash = ChangeHash(try reader.nextBuffer(32, "an outside stamp's hash"))
            let lamport = try counter("an outside stamp's lamport timestamp")
            let entryCount = try reader.nextCount(
                "an outside stamp's vector entries", elementSize: 2, limit: devices.count)
            var entries: [VersionVector.Entry] = []
            for _ in 0..<entryCount {
                entries.append(
                    VersionVector.Entry(
                        device: try device("a vector entry's device"), seq: try counter("a vector entry's seq")))
            }
            guard let vector = VersionVector(sortedEntries: entries), vector[id.device] == id.seq,
                stamps[id] == nil
            else {
                throw CodecError(
                    .notCanonical, "outside stamp \(id) repeats, or its vector does not name it", at: offset)
            }
            stamps[id] = ChangeStamp(id: id, hash: hash, lamport: lamport, vector: vector)
        }
        return stamps
    }

    /// The state of one decode: the columns, the changes so far, and what predictions need.
    struct RunDecoder {
        let document: DocumentID
        /// The run's format: the forms of edits made on a merge are read only in format 2.
        let format: UInt8
        /// Whether an edit made on a merge was read: a run of format 2 holds one (a writer uses format 1 otherwise).
        var sawMergeForm = false
        let devices: [DeviceID]
        var columns: [BinaryReader]
        let starts: [Int]
        /// The changes decoded so far, in the run's order.
        var changes: [Change] = []
        /// Per device (by index in the table), the seqs of its changes so far in the run, ascending (each change's
        /// seq is above its device's previous one), and where each change is in ``changes``.
        var seqs: [[UInt64]]
        var positions: [[Int]]
        var latestSeq: [UInt64]
        var latestLamport: [UInt64?]
        /// Per device, where its previous text operation ended (see `ChangeRunCodec+Kinds.swift`).
        var textEnd: [Int64]
        /// Where each change's canonical encoding is written after the document's identity, to be hashed.
        var body = BinaryWriter(capacity: 256)
        /// Where a text edit's operations are written (`ChangeRunCodec+Kinds.swift`).
        var group = BinaryWriter(capacity: 64)
        /// Where a change's parents are read.
        var parentStamps: [ChangeStamp] = []

        init(document: DocumentID, format: UInt8, devices: [DeviceID], columns: [BinaryReader], starts: [Int]) {
            self.document = document
            self.format = format
            self.devices = devices
            self.columns = columns
            self.starts = starts
            seqs = Array(repeating: [], count: devices.count)
            positions = Array(repeating: [], count: devices.count)
            latestSeq = Array(repeating: 0, count: devices.count)
            latestLamport = Array(repeating: nil, count: devices.count)
            textEnd = Array(repeating: 0, count: devices.count)
        }

        func offset(_ column: Column) -> Int { starts[column.rawValue] + columns[column.rawValue].offset }

        mutating func decode(count: Int, outside: (ChangeID) -> ChangeStamp?) throws(CodecError) -> [Change] {
            changes.reserveCapacity(count)
            for _ in 0..<count {
                let change = try next(outside: outside)
                seqs[change.device].append(change.change.id.seq)
                positions[change.device].append(changes.count)
                changes.append(change.change)
            }
            return changes
        }

        /// The change of the run with seq `seq` of device `device` (an index in the table), if any so far.
        func inRun(device: Int, seq: UInt64) -> Change? {
            let seqs = seqs[device]
            guard let first = seqs.first, seq >= first else { return nil }
            // A device's changes in a run usually have consecutive seqs: then the seq is its own index.
            if seq - first < UInt64(seqs.count), seqs[Int(seq - first)] == seq {
                return changes[positions[device][Int(seq - first)]]
            }
            var low = 0
            var high = seqs.count
            while low < high {
                let middle = (low + high) / 2
                if seqs[middle] < seq { low = middle + 1 } else { high = middle }
            }
            return low < seqs.count && seqs[low] == seq ? changes[positions[device][low]] : nil
        }

        mutating func device(_ column: Column, _ what: @autoclosure () -> String) throws(CodecError) -> Int {
            let offset = offset(column)
            let index = try columns[column].nextVarint(what())
            guard index < UInt64(devices.count) else {
                throw CodecError(
                    .invalidValue, "\(what()) is device \(index) of a table of \(devices.count)", at: offset)
            }
            return Int(index)
        }

        private mutating func next(outside: (ChangeID) -> ChangeStamp?) throws(CodecError)
            -> (change: Change, device: Int)
        {
            let device = try device(.device, "a change's device")
            let seqOffset = offset(.seq)
            let seqGap = try columns[.seq].nextVarint("a change's seq")
            guard seqGap < ChangeLimits.counter, latestSeq[device] < ChangeLimits.counter - seqGap else {
                throw CodecError(.oversized, "a seq is beyond the limit of \(ChangeLimits.counter)", at: seqOffset)
            }
            // Above the device's previous seq in the run: no change appears twice.
            let id = ChangeID(device: devices[device], seq: latestSeq[device] + seqGap + 1)

            let lamportDelta = try columns[.lamport].nextSigned("a change's lamport timestamp")
            let wallDelta = try columns[.wallTime].nextSigned("a change's wall time")
            let previous = changes.last
            // Read into the decode's buffer for parents, kept from change to change (the empty list swapped in holds
            // no storage): a change keeps only its parents' hashes.
            var parents: [ChangeStamp] = []
            swap(&parents, &parentStamps)
            defer { swap(&parents, &parentStamps) }
            try readParents(of: id, after: previous, outside: outside, into: &parents)
            let predictedLamport = ChangeRunCodec.predictedLamport(
                parents: parents, devicePrevious: latestLamport[device])
            let lamport = predictedLamport &+ UInt64(bitPattern: lamportDelta)
            guard lamport >= 1, lamport <= ChangeLimits.counter else {
                throw CodecError(
                    .invalidValue,
                    "change \(id) has the lamport timestamp \(lamport), outside 1…\(ChangeLimits.counter)",
                    at: offset(.lamport))
            }
            let vector = try readVector(of: id, parents: parents)
            var blobs: [BlobReference] = []
            let kind = try readKind(of: id, device: device, parents: parents, outside: outside, blobs: &blobs)
            let wallTime = Timestamp(
                millisecondsSince1970: (previous?.wallTime.millisecondsSince1970 ?? 0) &+ wallDelta)
            latestSeq[device] = id.seq
            latestLamport[device] = lamport
            // The fields are checked as `Change.init` requires: the vector names the change (`readVector`), the
            // lamport timestamp is at least 1 and no parent repeats (`readParents`).
            var hashes = parents.map(\.hash)
            if hashes.count > 1 { hashes.sort() }
            body.removeAll()
            body.write(fixed: document.uuid.high)
            body.write(fixed: document.uuid.low)
            ChangeCodec.encodeBody(
                id: id, parents: hashes, vector: vector, lamport: lamport, wallTime: wallTime, kind: kind, blobs: blobs,
                into: &body)
            let change = Change(
                document: document, id: id, parents: hashes, vector: vector, lamport: lamport, wallTime: wallTime,
                kind: kind, blobs: blobs, hash: ChangeCodec.hash(documentAndBody: body.bytes))
            return (change, device)
        }

        /// Reads a change's parents into `parents` (emptied first).
        private mutating func readParents(
            of id: ChangeID, after previous: Change?, outside: (ChangeID) -> ChangeStamp?,
            into parents: inout [ChangeStamp]
        ) throws(CodecError) {
            parents.removeAll(keepingCapacity: true)
            let offset = offset(.parents)
            let flag = try columns[.parents].nextVarint("a change's parents")
            if flag == 0 {
                guard let previous else {
                    throw CodecError(
                        .invalidValue, "the run's first change cannot name the previous change as its parent",
                        at: offset)
                }
                parents.append(ChangeStamp(previous))
                return
            }
            guard flag - 1 <= UInt64(ChangeLimits.parents) else {
                throw CodecError(
                    .oversized, "change \(id) names \(flag - 1) parents, more than \(ChangeLimits.parents)", at: offset)
            }
            parents.reserveCapacity(Int(flag - 1))
            // Few parents are compared with each other; many, through a set.
            var hashes = Set<ChangeHash>()
            for _ in 0..<Int(flag - 1) {
                let referenceOffset = self.offset(.parents)
                let stamp = try readReference(from: .parents, naming: "parent", of: id, outside: outside)
                let repeated =
                    flag - 1 > 8 ? !hashes.insert(stamp.hash).inserted : parents.contains { $0.hash == stamp.hash }
                guard !repeated else {
                    throw CodecError(.notCanonical, "change \(id) names parent \(stamp.id) twice", at: referenceOffset)
                }
                parents.append(stamp)
            }
        }

        /// Reads a reference (a device index and a seq, see ``ChangeRunCodec``) from `column` and finds the change it
        /// names, earlier in the run or outside it.
        mutating func readReference(
            from column: Column, naming what: String, of id: ChangeID, outside: (ChangeID) -> ChangeStamp?
        ) throws(CodecError) -> ChangeStamp {
            let referenceOffset = offset(column)
            let device = try device(column, "a \(what)'s device")
            let reference = try columns[column].nextVarint("a \(what)'s seq")
            let seq: UInt64
            if reference & 1 == 1 {
                seq = reference >> 1
            } else {
                guard reference >> 1 <= latestSeq[device] else {
                    throw CodecError(
                        .invalidValue, "a \(what)'s seq lies before the device's first change", at: referenceOffset)
                }
                seq = latestSeq[device] - (reference >> 1)
            }
            guard seq >= 1 else { throw CodecError(.invalidValue, "a \(what) has the seq 0", at: referenceOffset) }
            let named = ChangeID(device: devices[device], seq: seq)
            guard let stamp = inRun(device: device, seq: seq).map(ChangeStamp.init) ?? outside(named) else {
                throw CodecError(
                    .invalidValue, "change \(id) names \(what) \(named), which is neither earlier in the run nor known",
                    at: referenceOffset)
            }
            return stamp
        }

        private mutating func readVector(of id: ChangeID, parents: [ChangeStamp]) throws(CodecError)
            -> VersionVector
        {
            let offset = offset(.vector)
            let flag = try columns[.vector].nextVarint("a change's vector")
            if flag == 0 {
                let vector = ChangeRunCodec.predictedVector(of: id, parents: parents)
                // A parent's vector may name a later change of the device than this one.
                guard vector[id.device] == id.seq else {
                    throw CodecError(
                        .invalidValue, "change \(id)'s parents name a later change of its device", at: offset)
                }
                return vector
            }
            guard flag - 1 <= UInt64(devices.count) else {
                throw CodecError(
                    .oversized, "change \(id) has \(flag - 1) vector entries for \(devices.count) devices", at: offset)
            }
            var entries: [VersionVector.Entry] = []
            for _ in 0..<Int(flag - 1) {
                let device = try device(.vector, "a vector entry's device")
                let seqOffset = self.offset(.vector)
                let seq = try columns[.vector].nextVarint("a vector entry's seq")
                guard seq >= 1, seq <= ChangeLimits.counter else {
                    throw CodecError(.invalidValue, "a vector entry has the seq \(seq)", at: seqOffset)
                }
                entries.append(VersionVector.Entry(device: devices[device], seq: seq))
            }
            guard let vector = VersionVector(sortedEntries: entries), vector[id.device] == id.seq else {
                throw CodecError(
                    .notCanonical, "change \(id)'s vector is unsorted, repeats a device or does not name the change",
                    at: offset)
            }
            return vector
        }
    }
}
