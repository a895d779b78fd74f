import FolioCore

/// One immutable file of a shared sync folder: changes of one document that one device (the writer) put there.
///
/// A writer numbers the files of a document by ranges of a running count: its export vector (everything it knows
/// to be in the folder once the file is written) grows with each file, and the file covers counts
/// `first...last`, where `last` is that vector's ``VersionVector/changeCount`` and `first` is one more than the
/// previous file's `last`. The file holds only the changes the folder lacked (others may already be in another
/// writer's files), so `last - first + 1` may exceed the number of changes in it. A reader remembers, per writer
/// and document, the vector of the last file it read (a sync cursor): its change count says which files are new.
///
/// Layout: the magic `FOLIOSYN`, a format version, the writer, the document, `first`, `last`, the vector, devices
/// the writer knows by name, the changes (length-prefixed), the signed heads of the devices whose changes the file
/// holds (as in a `changes` message), the writer's public key and its signature of the SHA-256 of everything
/// before them (so that only the writer can have made the file, its claims included), and a SHA-256 of everything
/// before it.
struct FolderBatch: Hashable, Sendable {
    static let magic = Array("FOLIOSYN".utf8)
    static let formatVersion: UInt8 = 2
    static let fileExtension = "changes"

    /// Who wrote the file.
    var writer: Device
    /// The document of the changes.
    var document: DocumentID
    /// The first count the file covers.
    var first: UInt64
    /// The last count the file covers: ``vector``'s change count.
    var last: UInt64
    /// What the writer knows to be in the folder once this file is: its export vector.
    var vector: VersionVector
    /// Devices the writer knows by name.
    var devices: [Device]
    /// The changes, in causal order.
    var changes: [EncodedChange]
    /// The writer's signed head of each device whose changes the file holds: what vouches for them.
    var heads: [SignedHead]

    /// The file's name: `<first>-<last>.changes`.
    var fileName: String { Self.fileName(first: first, last: last) }

    static func fileName(first: UInt64, last: UInt64) -> String { "\(first)-\(last).\(fileExtension)" }

    /// Parses a batch file's name; `nil` for any other name (temporary files among them).
    static func range(ofFileName name: String) -> (first: UInt64, last: UInt64)? {
        guard name.hasSuffix("." + fileExtension) else { return nil }
        let parts = name.dropLast(fileExtension.count + 1).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = canonicalNumber(parts[0]), let last = canonicalNumber(parts[1]),
            first >= 1, last >= first
        else { return nil }
        return (first, last)
    }

    private static func canonicalNumber(_ text: Substring) -> UInt64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }), text == "0" || text.first != "0" else {
            return nil
        }
        return UInt64(text)
    }

    /// What the writer signs: a label and the SHA-256 of the file's bytes up to its public key.
    static func signedBytes(ofBody body: some Collection<UInt8>) -> [UInt8] {
        Array("folio folder batch 2\0".utf8) + ChangeHash(hashing: body).bytes
    }

    /// The file's bytes, signed with `key`: the writer's, or readers refuse the file.
    func encoded(signedWith key: DeviceKey) -> [UInt8] {
        var writer = BinaryWriter(capacity: 256)
        writer.write(raw: Self.magic)
        writer.write(byte: Self.formatVersion)
        writer.write(device: self.writer)
        writer.write(id: document.uuid)
        writer.write(varint: first)
        writer.write(varint: last)
        writer.write(vector: vector)
        writer.write(devices: devices)
        writer.write(varint: UInt64(changes.count))
        for change in changes { writer.write(lengthPrefixed: change.bytes) }
        writer.write(heads: heads, of: document)
        let signature = key.signature(for: Self.signedBytes(ofBody: writer.bytes))
        writer.write(raw: key.publicKey.bytes)
        writer.write(raw: signature)
        writer.write(raw: ChangeHash(hashing: writer.bytes).bytes)
        return writer.bytes
    }
}

// The decoder stands in an extension so that the compiler writes the memberwise initializer.
extension FolderBatch {
    /// Decodes a file's untrusted bytes.
    ///
    /// - Throws: ``CodecError`` naming what is wrong: not a batch file, a newer format, a checksum mismatch (a
    ///   damaged file), inconsistent counts, a change that does not decode, or a signature that is not the
    ///   writer's (a file someone else made in the writer's name).
    init(decoding bytes: [UInt8]) throws(CodecError) {
        guard bytes.count >= Self.magic.count + 1 + 32 else {
            throw CodecError(.truncated, "the file has \(bytes.count) bytes, too few for a batch of changes", at: 0)
        }
        guard Array(bytes.prefix(Self.magic.count)) == Self.magic else {
            throw CodecError(
                .invalidValue,
                "the file does not start with \(String(decoding: Self.magic, as: UTF8.self)), so it is not a batch of changes",
                at: 0)
        }
        let body = bytes.dropLast(32)
        guard ChangeHash(hashing: body).bytes == Array(bytes.suffix(32)) else {
            throw CodecError(
                .invalidValue, "the file's checksum does not match its contents: it is damaged", at: body.count)
        }
        self = try BinaryReader.reading(body) { reader throws(CodecError) in
            _ = try reader.nextRaw(Self.magic.count, "the magic")
            let version = try reader.nextByte("the format version")
            guard version == Self.formatVersion else {
                throw CodecError(
                    .unsupportedVersion,
                    "the file has format version \(version); this build reads version \(Self.formatVersion)",
                    at: reader.offset - 1)
            }
            let writer = try reader.readDevice("the writer")
            let document = DocumentID(try reader.readID("the document"))
            let countsOffset = reader.offset
            let first = try reader.nextVarint("the first count")
            let last = try reader.nextVarint("the last count")
            let vector = try reader.readVector("the export vector")
            // A folder never holds anywhere near 2^53 changes; beyond that, counts could not be added to.
            guard first >= 1, first <= last, last <= ChangeLimits.counter, vector.changeCount == last else {
                throw CodecError(
                    .invalidValue,
                    "the counts \(first)-\(last) do not fit the export vector, which names \(vector.changeCount) changes",
                    at: countsOffset)
            }
            let devices = try reader.readDevices("the devices")
            let count = try reader.nextCount(
                "the number of changes", elementSize: 2, limit: SyncMessage.Limits.changes)
            var changes: [EncodedChange] = []
            changes.reserveCapacity(count)
            for index in 0..<count {
                let data = try reader.nextLengthPrefixed("change \(index)", limit: SyncMessage.Limits.changeBytes)
                let start = reader.offset - data.count
                do throws(CodecError) {
                    changes.append(try EncodedChange(checking: [UInt8](data), document: document))
                } catch {
                    throw CodecError(
                        error.code, "change \(index) of the file: \(error.message)", at: start + error.offset)
                }
            }
            let heads = try reader.readHeads(of: document, "the file's signed heads")
            let signedLength = reader.offset
            let keyOffset = reader.offset
            let publicKey = try DevicePublicKey(
                checking: Array(try reader.nextBuffer(32, "the writer's public key")))
            let signature = Array(try reader.nextBuffer(64, "the writer's signature"))
            guard reader.isAtEnd else {
                throw CodecError(
                    .trailingBytes, "\(reader.remaining) bytes follow the writer's signature", at: reader.offset)
            }
            guard publicKey.deviceID == writer.id,
                publicKey.isValidSignature(signature, for: Self.signedBytes(ofBody: body.prefix(signedLength)))
            else {
                throw CodecError(
                    .invalidValue, "the file is not signed by its writer \(writer.id): someone else made it",
                    at: keyOffset)
            }
            return FolderBatch(
                writer: writer, document: document, first: first, last: last, vector: vector, devices: devices,
                changes: changes, heads: heads)
        }
    }
}
