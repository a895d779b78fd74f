import Crypto
import Foundation

/// The versioned, canonical binary encoding of a change.
///
/// Layout of format 1 (varints are unsigned LEB128 in shortest form):
///
/// ```
/// u8       format (1)
/// 16 B     device            varint  seq          varint  lamport       zigzag  wall time (ms)
/// varint   parent count      32 B each, strictly ascending
/// varint   vector count      (16 B device, varint seq ≥ 1) each, strictly ascending by device; names the change
/// u8       kind              then the kind's fields (see `encodeKind`)
/// ```
///
/// A change that refers to blobs (``Change/blobs``) writes, in place of the kind's tag, the tag 4, a varint count
/// (at least 1) and the references (32 B hash, varint size; strictly ascending), then the kind's tag and fields: a
/// change without blobs encodes as it always did, and a reader that predates blobs refuses the tag.
///
/// A one-character text edit by a device with no peers takes about 80 bytes (its identity twice, in the header
/// and in its vector entry, and one parent hash), plus the model's few bytes of operation. Rapid edits are grouped
/// into one change by documents, so this is paid per group, not per keystroke.
enum ChangeCodec {
    static let formatVersion: UInt8 = 1

    /// Bounds that keep a hostile input from causing large allocations.
    enum Limits {
        static let payloadBytes = 512 << 20
        static let textBytes = 64 << 10
        static let hashes = 1 << 20
        static let vectorEntries = 1 << 20
        /// The most blobs one change may refer to.
        static let blobs = 1 << 16
    }

    private enum KindTag: UInt8 { case edit = 0, lifecycle = 1, baseline = 2, resolution = 3, blobs = 4 }
    private enum IntentTag: UInt8 { case edit = 0, undo = 1, redo = 2 }
    /// Set in an edit's intent byte when the edit was made on the merge of its parents (`Edit.isMadeOnMerge`);
    /// clear in every other edit, so an edit without it encodes as it always did.
    private static let madeOnMergeBit: UInt8 = 0x80
    private enum LifecycleTag: UInt8 {
        case create = 0, rename = 1, move = 2, delete = 3, restore = 4, markVersion = 5
    }
    /// The byte a resolution's strategy is written as, in a change's encoding and in a run's
    /// (`ChangeRunCodec+Kinds.swift`); a custom strategy's name follows it.
    enum StrategyTag: UInt8 {
        case userChoice = 0, latestWins = 1, merge = 2, keepBoth = 3, custom = 4, appMerge = 5

        /// The tag `strategy` is written as.
        init(_ strategy: Resolution.Strategy) {
            switch strategy {
            case .userChoice: self = .userChoice
            case .latestWins: self = .latestWins
            case .merge: self = .merge
            case .appMerge: self = .appMerge
            case .keepBoth: self = .keepBoth
            case .custom: self = .custom
            }
        }

        /// The strategy the tag stands for; `name` reads the name that follows the tag of a custom strategy.
        func strategy(name: () throws(CodecError) -> String) throws(CodecError) -> Resolution.Strategy {
            switch self {
            case .userChoice: .userChoice
            case .latestWins: .latestWins
            case .merge: .merge
            case .appMerge: .appMerge
            case .keepBoth: .keepBoth
            case .custom: .custom(try name())
            }
        }
    }

    /// Writes `strategy`: its tag, then a custom strategy's name.
    static func write(_ strategy: Resolution.Strategy, into writer: inout BinaryWriter) {
        writer.write(byte: StrategyTag(strategy).rawValue)
        if case .custom(let name) = strategy { writer.write(string: name) }
    }

    static func hash(document: DocumentID, body: [UInt8]) -> ChangeHash {
        body.withUnsafeBytes { hash(document: document, body: $0) }
    }

    /// The hash of bytes that are the document's identity (16 bytes, as `UUIDBytes` writes them fixed) followed by
    /// a change's canonical encoding: ``hash(document:body:)`` in one pass.
    static func hash(documentAndBody bytes: [UInt8]) -> ChangeHash {
        var hasher = SHA256()
        bytes.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        return ChangeHash(digest: hasher.finalize())
    }

    static func hash(document: DocumentID, body: UnsafeRawBufferPointer) -> ChangeHash {
        var hasher = SHA256()
        document.uuid.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        hasher.update(bufferPointer: body)
        return ChangeHash(digest: hasher.finalize())
    }

    // MARK: Encoding

    static func encodeBody(
        id: ChangeID, parents: [ChangeHash], vector: VersionVector, lamport: UInt64, wallTime: Timestamp,
        kind: ChangeKind, blobs: [BlobReference], into writer: inout BinaryWriter
    ) {
        writer.write(byte: formatVersion)
        write(id.device.uuid, into: &writer)
        writer.write(varint: id.seq)
        writer.write(varint: lamport)
        writer.write(signed: wallTime.millisecondsSince1970)
        writeHashes(parents, into: &writer)
        writer.write(varint: UInt64(vector.entries.count))
        for entry in vector.entries {
            write(entry.device.uuid, into: &writer)
            writer.write(varint: entry.seq)
        }
        encodeKind(kind, blobs: blobs, into: &writer)
    }

    private static func write(_ uuid: UUIDBytes, into writer: inout BinaryWriter) {
        writer.write(fixed: uuid.high)
        writer.write(fixed: uuid.low)
    }

    private static func writeHashes(_ hashes: [ChangeHash], into writer: inout BinaryWriter) {
        writer.write(varint: UInt64(hashes.count))
        for hash in hashes {
            // The words are big-endian values: written fixed, they are the hash's bytes in order.
            writer.write(fixed: hash.words.0)
            writer.write(fixed: hash.words.1)
            writer.write(fixed: hash.words.2)
            writer.write(fixed: hash.words.3)
        }
    }

    /// Writes `kind`, after the references of `blobs` (ascending, unique) when there are any.
    static func encodeKind(_ kind: ChangeKind, blobs: [BlobReference], into writer: inout BinaryWriter) {
        if !blobs.isEmpty {
            writer.write(byte: KindTag.blobs.rawValue)
            writer.write(varint: UInt64(blobs.count))
            for blob in blobs { writer.write(blob) }
        }
        switch kind {
        case .edit(let edit):
            writer.write(byte: KindTag.edit.rawValue)
            let flags = edit.isMadeOnMerge ? madeOnMergeBit : 0
            switch edit.intent {
            case .edit:
                writer.write(byte: IntentTag.edit.rawValue | flags)
            case .undo(let target):
                writer.write(byte: IntentTag.undo.rawValue | flags)
                write(target.device.uuid, into: &writer)
                writer.write(varint: target.seq)
            case .redo(let target):
                writer.write(byte: IntentTag.redo.rawValue | flags)
                write(target.device.uuid, into: &writer)
                writer.write(varint: target.seq)
            }
            writer.write(lengthPrefixed: edit.operations)
        case .lifecycle(let event):
            writer.write(byte: KindTag.lifecycle.rawValue)
            switch event {
            case .create(let name, let type, let container):
                writer.write(byte: LifecycleTag.create.rawValue)
                writer.write(string: name)
                writer.write(string: type)
                writer.write(byte: container.rawValue)
            case .rename(let name):
                writer.write(byte: LifecycleTag.rename.rawValue)
                writer.write(string: name)
            case .move(let container):
                writer.write(byte: LifecycleTag.move.rawValue)
                writer.write(byte: container.rawValue)
            case .delete:
                writer.write(byte: LifecycleTag.delete.rawValue)
            case .restore:
                writer.write(byte: LifecycleTag.restore.rawValue)
            case .markVersion(let name):
                writer.write(byte: LifecycleTag.markVersion.rawValue)
                writer.write(string: name)
            }
        case .baseline(let contents):
            writer.write(byte: KindTag.baseline.rawValue)
            writer.write(lengthPrefixed: contents)
        case .resolution(let resolution):
            writer.write(byte: KindTag.resolution.rawValue)
            write(resolution.strategy, into: &writer)
            writeHashes(resolution.chosen, into: &writer)
            writeHashes(resolution.discarded, into: &writer)
            if let contents = resolution.contents {
                writer.write(byte: 1)
                writer.write(lengthPrefixed: contents)
            } else {
                writer.write(byte: 0)
            }
        }
    }

    // MARK: Decoding

    static func decode(_ bytes: some ContiguousBytes, document: DocumentID) throws(CodecError) -> Change {
        let result: Result<Change, CodecError> = bytes.withUnsafeBytes { buffer in
            do throws(CodecError) {
                var reader = BinaryReader(buffer)
                let change = try decodeBody(&reader, document: document, body: buffer)
                return .success(change)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func decodeBody(
        _ reader: inout BinaryReader, document: DocumentID, body: UnsafeRawBufferPointer
    ) throws(CodecError) -> Change {
        let version = try reader.nextByte("the format version")
        guard version == formatVersion else {
            throw CodecError(
                .unsupportedVersion,
                "change format \(version) is not supported (this build reads format \(formatVersion))", at: 0)
        }
        let device = DeviceID(try readUUID(&reader, "the device"))
        let seq = try readCounter(&reader, "sequence number", "the sequence number")
        let lamport = try readCounter(&reader, "lamport timestamp", "the lamport timestamp")
        let wallTime = Timestamp(millisecondsSince1970: try reader.nextSigned("the wall time"))
        let parents = try readHashes(&reader, "parents", limit: ChangeLimits.parents)
        let vectorOffset = reader.offset
        guard let vector = VersionVector(sortedEntries: try VersionVector.readEntries(&reader)) else {
            throw CodecError(.notCanonical, "vector entries are unsorted, repeated or zero", at: vectorOffset)
        }
        guard vector[device] == seq else {
            throw CodecError(
                .invalidValue, "the vector \(vector) does not name the change \(device)#\(seq) itself", at: vectorOffset
            )
        }
        var blobs: [BlobReference] = []
        let kind = try decodeKind(&reader, blobs: &blobs)
        guard reader.isAtEnd else {
            throw CodecError(.trailingBytes, "\(reader.remaining) bytes follow the change", at: reader.offset)
        }
        return Change(
            document: document, id: ChangeID(device: device, seq: seq), parents: parents, vector: vector,
            lamport: lamport, wallTime: wallTime, kind: kind, blobs: blobs, hash: hash(document: document, body: body))
    }

    private static func readUUID(_ reader: inout BinaryReader, _ what: String) throws(CodecError) -> UUIDBytes {
        let high = try reader.nextFixed(what)
        let low = try reader.nextFixed(what)
        return UUIDBytes(high: high, low: low)
    }

    private static func readHashes(
        _ reader: inout BinaryReader, _ what: String, limit: Int = Limits.hashes
    ) throws(CodecError) -> [ChangeHash] {
        let start = reader.offset
        let count = try reader.nextCount("the number of \(what)", elementSize: 32, limit: limit)
        var hashes: [ChangeHash] = []
        hashes.reserveCapacity(count)
        for _ in 0..<count {
            let hash = ChangeHash(try reader.nextBuffer(32, "a hash among \(what)"))
            if let last = hashes.last, !(last < hash) {
                throw CodecError(.notCanonical, "\(what) are not in strictly ascending order", at: start)
            }
            hashes.append(hash)
        }
        return hashes
    }

    /// Reads a change's list of blob references: at least one, strictly ascending, each within
    /// ``Limits/payloadBytes``.
    private static func readBlobs(_ reader: inout BinaryReader) throws(CodecError) -> [BlobReference] {
        let start = reader.offset
        let count = try reader.nextCount("the number of blobs", elementSize: 33, limit: Limits.blobs)
        guard count > 0 else {
            throw CodecError(.notCanonical, "a change without blobs does not list them", at: start)
        }
        var blobs: [BlobReference] = []
        blobs.reserveCapacity(count)
        for _ in 0..<count {
            let blob = try reader.nextBlobReference(limit: Limits.payloadBytes)
            if let last = blobs.last, !(last < blob) {
                throw CodecError(.notCanonical, "a change's blobs are not in strictly ascending order", at: start)
            }
            blobs.append(blob)
        }
        return blobs
    }

    private static func readTarget(_ reader: inout BinaryReader) throws(CodecError) -> ChangeID {
        let device = DeviceID(try readUUID(&reader, "the undone change's device"))
        let seq = try readCounter(&reader, "sequence number", "the undone change's sequence number")
        return ChangeID(device: device, seq: seq)
    }

    /// Reads a sequence number or a lamport timestamp (`name`), which starts at 1 and stays within
    /// ``ChangeLimits/counter``.
    private static func readCounter(
        _ reader: inout BinaryReader, _ name: String, _ what: String
    ) throws(CodecError) -> UInt64 {
        let offset = reader.offset
        let value = try reader.nextVarint(what)
        guard value >= 1 else { throw CodecError(.invalidValue, "\(name) 0 (they start at 1)", at: offset) }
        guard value <= ChangeLimits.counter else {
            throw CodecError(
                .oversized, "\(name) \(value) is beyond the limit of \(ChangeLimits.counter)", at: offset)
        }
        return value
    }

    private static func readContainer(_ reader: inout BinaryReader) throws(CodecError) -> DocumentContainer {
        try readTag(&reader, "container")
    }

    /// Reads a one-byte tag (`name`: "change kind"; `what`, where the input ends: "the change kind"), refusing a
    /// byte that is not one of `Tag`'s.
    private static func readTag<Tag: RawRepresentable<UInt8>>(
        _ reader: inout BinaryReader, _ name: String, what: String? = nil
    ) throws(CodecError) -> Tag {
        let offset = reader.offset
        let raw = try reader.nextByte(what ?? "the \(name)")
        guard let tag = Tag(rawValue: raw) else {
            throw CodecError(.invalidValue, "unknown \(name) \(raw)", at: offset)
        }
        return tag
    }

    /// Reads the references of the blobs a change refers to, if it lists any (into `blobs`, emptied first), and
    /// the change's kind.
    static func decodeKind(
        _ reader: inout BinaryReader, blobs: inout [BlobReference]
    ) throws(CodecError) -> ChangeKind {
        blobs.removeAll()
        var tag: KindTag = try readTag(&reader, "change kind")
        if tag == .blobs {
            blobs = try readBlobs(&reader)
            tag = try readTag(&reader, "change kind")
        }
        switch tag {
        case .blobs:
            throw CodecError(.notCanonical, "a change lists its blobs twice", at: reader.offset - 1)
        case .edit:
            let intent: Edit.Intent
            let offset = reader.offset
            let byte = try reader.nextByte("the edit's intent")
            guard let tag = IntentTag(rawValue: byte & ~madeOnMergeBit) else {
                throw CodecError(.invalidValue, "unknown edit intent \(byte)", at: offset)
            }
            switch tag {
            case .edit: intent = .edit
            case .undo: intent = .undo(of: try readTarget(&reader))
            case .redo: intent = .redo(of: try readTarget(&reader))
            }
            let operations = try reader.nextLengthPrefixed("the operations", limit: Limits.payloadBytes)
            return .edit(Edit(operations: operations, intent: intent, isMadeOnMerge: byte & madeOnMergeBit != 0))
        case .lifecycle:
            switch try readTag(&reader, "lifecycle event") as LifecycleTag {
            case .create:
                let name = try reader.nextString("the document's name", limit: Limits.textBytes)
                let type = try reader.nextString("the document's type", limit: Limits.textBytes)
                return .lifecycle(.create(name: name, type: type, container: try readContainer(&reader)))
            case .rename:
                return .lifecycle(.rename(to: try reader.nextString("the new name", limit: Limits.textBytes)))
            case .move:
                return .lifecycle(.move(to: try readContainer(&reader)))
            case .delete:
                return .lifecycle(.delete)
            case .restore:
                return .lifecycle(.restore)
            case .markVersion:
                return .lifecycle(
                    .markVersion(name: try reader.nextString("the version's name", limit: Limits.textBytes)))
            }
        case .baseline:
            return .baseline(
                contents: try reader.nextLengthPrefixed("the baseline contents", limit: Limits.payloadBytes))
        case .resolution:
            let tag: StrategyTag = try readTag(&reader, "resolution strategy")
            let strategy = try tag.strategy { () throws(CodecError) -> String in
                try reader.nextString("the custom strategy's name", limit: Limits.textBytes)
            }
            let chosen = try readHashes(&reader, "chosen heads")
            let discarded = try readHashes(&reader, "discarded heads")
            let flagOffset = reader.offset
            let contents: Data?
            switch try reader.nextByte("the contents flag") {
            case 0: contents = nil
            case 1: contents = try reader.nextLengthPrefixed("the resolved contents", limit: Limits.payloadBytes)
            case let flag: throw CodecError(.invalidValue, "contents flag \(flag) is neither 0 nor 1", at: flagOffset)
            }
            return .resolution(Resolution(strategy: strategy, chosen: chosen, discarded: discarded, contents: contents))
        }
    }
}
