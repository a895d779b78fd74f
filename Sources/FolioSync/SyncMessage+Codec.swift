import FolioCore
import Foundation

extension SyncMessage {
    /// The format version a message is written in when nothing else is agreed: every peer reads it.
    public static let formatVersion: UInt8 = 2

    /// The format version that adds ``run(_:)``: format 2's messages, and changes in the compact form of a run. A
    /// peer writes it only to a peer that said it reads it (docs/protocol.md, "Versions").
    public static let runFormatVersion: UInt8 = 3

    /// The format version that adds people: format 3's messages, with each device of a hello followed by its person
    /// (`Device.person`), and a hello's proof that its speaker holds its device's key (``SyncHello/proof``). A peer
    /// writes it only to a peer that said it reads it (docs/protocol.md, "Versions").
    public static let peopleFormatVersion: UInt8 = 4

    /// The format versions this build reads.
    public static let readableFormats: Set<UInt8> = [formatVersion, runFormatVersion, peopleFormatVersion]

    /// The newest format version this build writes.
    public static let newestFormat: UInt8 = peopleFormatVersion

    /// The HTTP header of a WebSocket upgrade request in which a client lists the message formats it reads,
    /// comma-separated (`2, 3, 4`); a server writes format 3 or 4 only to a client that lists it (docs/protocol.md,
    /// "Versions").
    public static let formatsHeader = "Folio-Message-Formats"

    /// Limits on what a decoder accepts, so that a hostile count never causes a large allocation.
    public enum Limits {
        static let documents = 1 << 20
        static let devices = 1 << 16
        static let vectorEntries = 1 << 20
        static let heads = 1 << 16
        static let changes = 1 << 20
        static let changeBytes = 600 << 20
        static let nameBytes = 64 << 10
        /// The most changes a run declares.
        public static let runChanges = 1 << 16
        /// The most bytes a run's columns declare they inflate to.
        public static let runColumnBytes = 16 << 20
        /// The most bytes a run's decoded changes may take, by the bound ``ChangeRunMessage/decodedBound(knownDevices:)``
        /// computes before decoding: a receiver refuses a run past it, and a sender splits its runs to stay within half
        /// of it.
        public static let runDecodedBytes = 64 << 20
        /// The most bytes of a run.
        static let runBytes = 16 << 20
        /// The most blobs a ``SyncMessage/wantBlobs(_:)`` message names.
        public static let wantedBlobs = 1_024
        /// The most bytes of the blobs of one ``SyncMessage/blobs(_:lacking:)`` message, and so the largest blob a sync
        /// carries: 12 MiB, within the 16 MiB of a server's frame.
        public static let blobMessageBytes = BlobReference.largestSynced
    }

    private enum Tag: UInt8 {
        case hello = 0
        case request = 1
        case changes = 2
        case done = 3
        case run = 4
        case wantBlobs = 5
        case blobs = 6
    }

    /// The format version of a message's bytes: their first byte; `nil` for no bytes.
    public static func format(of bytes: [UInt8]) -> UInt8? { bytes.first }

    /// The document of a `changes` message or a run, read from its first bytes without decoding the rest; `nil` for
    /// bytes that do not start as one.
    public static func changesDocument(_ bytes: [UInt8]) -> DocumentID? {
        guard startsAsChanges(bytes), bytes.count >= 18 else { return nil }
        return DocumentID(UUIDBytes(bytes: Array(bytes[2..<18])))
    }

    /// Whether `bytes` start as a `changes` message or a run (without decoding the rest).
    public static func startsAsChanges(_ bytes: [UInt8]) -> Bool {
        guard bytes.count > 1 else { return false }
        switch (bytes[0], bytes[1]) {
        case (formatVersion, Tag.changes.rawValue), (runFormatVersion, Tag.changes.rawValue),
            (runFormatVersion, Tag.run.rawValue), (peopleFormatVersion, Tag.changes.rawValue),
            (peopleFormatVersion, Tag.run.rawValue):
            return true
        default:
            return false
        }
    }

    /// The message's binary form in format ``formatVersion`` (2): the format version, a tag, then the fields (see
    /// the cases). Deterministic: equal messages have equal bytes.
    ///
    /// - Precondition: the message is not a ``run(_:)`` (format 3 only).
    /// - Complexity: O(size of the message + documents × log documents).
    public func encoded() -> [UInt8] {
        encoded(format: Self.formatVersion)
    }

    /// The message's binary form in `format`: ``formatVersion`` (2); ``runFormatVersion`` (3), which writes the
    /// same fields and may hold a ``run(_:)``; or ``peopleFormatVersion`` (4), which also writes the person of each
    /// device of a hello (the earlier formats leave persons out).
    ///
    /// - Precondition: `format` is one of ``readableFormats``; a run is written in format 3 or 4.
    /// - Complexity: O(size of the message + documents × log documents).
    public func encoded(format: UInt8) -> [UInt8] {
        precondition(Self.readableFormats.contains(format), "message format \(format) is not one this build writes")
        var writer = BinaryWriter(capacity: 64)
        writer.write(byte: format)
        switch self {
        case .hello(let hello):
            writer.write(byte: Tag.hello.rawValue)
            let people = format >= Self.peopleFormatVersion
            writer.write(device: hello.device, people: people)
            writer.write(fixed: hello.session)
            if let replyTo = hello.replyTo {
                writer.write(byte: 1)
                writer.write(fixed: replyTo)
            } else {
                writer.write(byte: 0)
            }
            // Every document with a vector or heads, each with both (an empty vector, no heads when absent).
            let documents = Set(hello.vectors.keys).union(hello.heads.keys).sorted()
            writer.write(varint: UInt64(documents.count))
            for document in documents {
                writer.write(id: document.uuid)
                writer.write(vector: hello.vectors[document] ?? VersionVector())
                let heads = hello.heads[document] ?? []
                writer.write(varint: UInt64(heads.count))
                for head in heads { writer.write(raw: head.bytes) }
            }
            writer.write(devices: hello.devices, people: people)
            if people {
                if let proof = hello.proof {
                    writer.write(byte: 1)
                    writer.write(raw: proof.publicKey.bytes)
                    writer.write(fixed: proof.session)
                    writer.write(raw: proof.signature)
                } else {
                    writer.write(byte: 0)
                }
            }
        case .request(let document, let since):
            writer.write(byte: Tag.request.rawValue)
            writer.write(id: document.uuid)
            writer.write(vector: since)
        case .changes(let document, let changes, let heads):
            writer.write(byte: Tag.changes.rawValue)
            writer.write(id: document.uuid)
            writer.write(varint: UInt64(changes.count))
            for change in changes {
                precondition(
                    change.change.document == document, "change \(change.change.id) belongs to another document")
                writer.write(lengthPrefixed: change.bytes)
            }
            writer.write(heads: heads, of: document)
        case .run(let run):
            precondition(format >= Self.runFormatVersion, "a run is written in message format 3 or 4")
            writer.write(byte: Tag.run.rawValue)
            writer.write(id: run.document.uuid)
            writer.write(lengthPrefixed: run.bytes)
            writer.write(heads: run.heads, of: run.document)
        case .done(let from, let to):
            writer.write(byte: Tag.done.rawValue)
            writer.write(fixed: from)
            writer.write(fixed: to)
        case .wantBlobs(let references):
            writer.write(byte: Tag.wantBlobs.rawValue)
            writer.write(varint: UInt64(references.count))
            for reference in references { writer.write(reference) }
        case .blobs(let blobs, let lacking):
            writer.write(byte: Tag.blobs.rawValue)
            writer.write(varint: UInt64(blobs.count))
            for blob in blobs { writer.write(lengthPrefixed: blob) }
            writer.write(varint: UInt64(lacking.count))
            for reference in lacking { writer.write(reference) }
        }
        return writer.bytes
    }

    /// Decodes untrusted bytes written by ``encoded(format:)`` in either format, decoding (and so hashing) every change
    /// a `changes` message carries. A run is checked against ``Limits`` (its declared change count, devices and
    /// column size) but not decoded: it names changes the receiver holds (``ChangeRunMessage``).
    ///
    /// - Throws: `CodecError` naming what is wrong: `unsupportedVersion`, `truncated`, `oversized`,
    ///   `invalidValue` (an unknown tag, a run in format 2), `notCanonical` (documents or devices out of order or
    ///   repeated), `trailingBytes`, or a change's own decoding error (its offset then counts from the message's
    ///   start).
    public init(decoding bytes: [UInt8]) throws {
        self = try BinaryReader.readingWhole(bytes, "the message") { reader throws(CodecError) in
            try Self.decode(&reader)
        }
    }

    private static func decode(_ reader: inout BinaryReader) throws(CodecError) -> SyncMessage {
        let (format, tag) = try reader.header(
            versions: readableFormats, of: "message", versionName: "format version", kindName: "tag", as: Tag.self)
        switch tag {
        case .hello:
            let people = format >= peopleFormatVersion
            let device = try reader.readDevice("the hello's device", people: people)
            let session = try reader.nextFixed("the hello's session")
            let flagOffset = reader.offset
            let replyTo: UInt64?
            switch try reader.nextByte("the hello's reply flag") {
            case 0: replyTo = nil
            case 1: replyTo = try reader.nextFixed("the session the hello replies to")
            case let flag: throw CodecError(.invalidValue, "\(flag) is not a reply flag (0 or 1)", at: flagOffset)
            }
            let count = try reader.nextCount("the hello's document count", elementSize: 17, limit: Limits.documents)
            var vectors: [DocumentID: VersionVector] = [:]
            var heads: [DocumentID: [ChangeHash]] = [:]
            vectors.reserveCapacity(count)
            var previous: DocumentID?
            for _ in 0..<count {
                let offset = reader.offset
                let document = DocumentID(try reader.readID("a document of the hello"))
                if let previous, !(previous < document) {
                    throw CodecError(.notCanonical, "the hello's documents are out of order or repeated", at: offset)
                }
                previous = document
                let vector = try reader.readVector("the vector of document \(document)")
                let headsOffset = reader.offset
                let headCount = try reader.nextCount(
                    "the number of heads of document \(document)", elementSize: 32, limit: Limits.heads)
                var documentHeads: [ChangeHash] = []
                documentHeads.reserveCapacity(headCount)
                for _ in 0..<headCount {
                    documentHeads.append(ChangeHash(try reader.nextBuffer(32, "a head of document \(document)")))
                }
                guard zip(documentHeads, documentHeads.dropFirst()).allSatisfy({ $0 < $1 }) else {
                    throw CodecError(
                        .notCanonical, "the heads of document \(document) are out of order or repeated", at: headsOffset
                    )
                }
                if !vector.isEmpty { vectors[document] = vector }
                if !documentHeads.isEmpty { heads[document] = documentHeads }
            }
            let devices = try reader.readDevices("the hello's devices", people: people)
            var proof: DeviceProof?
            if people {
                let proofOffset = reader.offset
                switch try reader.nextByte("the hello's proof flag") {
                case 0: break
                case 1:
                    let key = try DevicePublicKey(checking: Array(try reader.nextBuffer(32, "the proof's public key")))
                    let session = try reader.nextFixed("the proof's session")
                    let signature = Array(try reader.nextBuffer(64, "the proof's signature"))
                    proof = DeviceProof(publicKey: key, session: session, signature: signature)
                case let flag: throw CodecError(.invalidValue, "\(flag) is not a proof flag (0 or 1)", at: proofOffset)
                }
            }
            return .hello(
                SyncHello(
                    device: device, session: session, replyTo: replyTo, vectors: vectors, heads: heads,
                    devices: devices,
                    proof: proof))
        case .request:
            let document = DocumentID(try reader.readID("the request's document"))
            return .request(document: document, since: try reader.readVector("the request's vector"))
        case .changes:
            let document = DocumentID(try reader.readID("the document of the changes"))
            let count = try reader.nextCount("the number of changes", elementSize: 2, limit: Limits.changes)
            var changes: [EncodedChange] = []
            changes.reserveCapacity(count)
            for index in 0..<count {
                let bytes = try reader.nextLengthPrefixed("change \(index)", limit: Limits.changeBytes)
                let start = reader.offset - bytes.count
                do {
                    changes.append(try EncodedChange(checking: [UInt8](bytes), document: document))
                } catch {
                    throw CodecError(
                        error.code, "change \(index) of the message: \(error.message)", at: start + error.offset)
                }
            }
            let heads = try reader.readHeads(of: document, "the message's signed heads")
            return .changes(document: document, changes: changes, heads: heads)
        case .run:
            guard format >= runFormatVersion else {
                throw CodecError(.invalidValue, "a run is a message of format 3 or 4, not \(format)", at: 1)
            }
            let document = DocumentID(try reader.readID("the document of the run"))
            let bytes = [UInt8](try reader.nextLengthPrefixed("the run", limit: Limits.runBytes))
            let start = reader.offset - bytes.count
            let declared: (count: Int, devices: Int, columnBytes: Int)
            do { declared = try ChangeRunMessage.declared(bytes) } catch {
                throw CodecError(error.code, "the run: \(error.message)", at: start + error.offset)
            }
            let heads = try reader.readHeads(of: document, "the run's signed heads")
            return .run(ChangeRunMessage(document: document, bytes: bytes, heads: heads, declared: declared))
        case .done:
            let from = try reader.nextFixed("the sender's session")
            return .done(from: from, to: try reader.nextFixed("the recipient's session"))
        case .wantBlobs:
            return .wantBlobs(try reader.readBlobReferences("wanted"))
        case .blobs:
            let count = try reader.nextCount("the number of blobs", elementSize: 1, limit: Limits.wantedBlobs)
            var blobs: [Data] = []
            var total = 0
            for index in 0..<count {
                let offset = reader.offset
                let blob = try reader.nextLengthPrefixed("blob \(index)", limit: Limits.blobMessageBytes)
                total += blob.count
                guard total <= Limits.blobMessageBytes else {
                    throw CodecError(
                        .oversized, "the blobs take more than \(Limits.blobMessageBytes) bytes", at: offset)
                }
                blobs.append(blob)
            }
            return .blobs(blobs, lacking: try reader.readBlobReferences("lacking"))
        }
    }
}

// The pieces Folio's sync formats share (messages and folder batches).
extension BinaryWriter {
    /// Writes signed heads of `document`: a count, then each head, in device order, one per device.
    mutating func write(heads: [SignedHead], of document: DocumentID) {
        let sorted = heads.sorted { $0.change.device < $1.change.device }
        write(varint: UInt64(sorted.count))
        for head in sorted {
            precondition(head.document == document, "\(head) belongs to another document")
            write(head: head)
        }
    }

    mutating func write(id: UUIDBytes) {
        write(fixed: id.high)
        write(fixed: id.low)
    }

    /// A vector inline: its entry count, then (16-byte device, varint seq) per entry, in device order.
    mutating func write(vector: VersionVector) {
        write(varint: UInt64(vector.entries.count))
        for entry in vector.entries {
            write(id: entry.device.uuid)
            write(varint: entry.seq)
        }
    }

    /// A device: its identity, its name, and with `people` its person.
    mutating func write(device: Device, people: Bool = false) {
        write(id: device.id.uuid)
        write(string: device.name)
        if people { write(string: device.person) }
    }

    /// Devices sorted by identity, each once, each as ``write(device:people:)`` writes it.
    mutating func write(devices: [Device], people: Bool = false) {
        let sorted = devices.sorted { $0.id < $1.id }
        write(varint: UInt64(sorted.count))
        for device in sorted { write(device: device, people: people) }
    }
}

extension BinaryReader {
    /// Reads what ``BinaryWriter/write(heads:of:)`` writes, refusing heads of another document and heads out of
    /// device order or repeated.
    mutating func readHeads(of document: DocumentID, _ what: @autoclosure () -> String) throws(CodecError)
        -> [SignedHead]
    {
        let count = try nextCount("the number of \(what())", elementSize: 160, limit: SyncMessage.Limits.heads)
        var heads: [SignedHead] = []
        heads.reserveCapacity(count)
        for _ in 0..<count {
            let offset = self.offset
            let head = try nextHead()
            guard head.document == document else {
                throw CodecError(
                    .invalidValue, "\(what()) include one of document \(head.document), not \(document)", at: offset)
            }
            if let previous = heads.last, !(previous.change.device < head.change.device) {
                throw CodecError(.notCanonical, "\(what()) are out of device order or repeated", at: offset)
            }
            heads.append(head)
        }
        return heads
    }

    mutating func readID(_ what: @autoclosure () -> String) throws(CodecError) -> UUIDBytes {
        let high = try nextFixed(what())
        return UUIDBytes(high: high, low: try nextFixed(what()))
    }

    mutating func readVector(_ what: @autoclosure () -> String) throws(CodecError) -> VersionVector {
        let start = offset
        let count = try nextCount(
            "the entry count of \(what())", elementSize: 17, limit: SyncMessage.Limits.vectorEntries)
        var entries: [VersionVector.Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let device = DeviceID(try readID("a device of \(what())"))
            let seqOffset = offset
            let seq = try nextVarint("a sequence number of \(what())")
            guard seq <= ChangeLimits.counter else {
                throw CodecError(
                    .oversized,
                    "a sequence number of \(what()), \(seq), is beyond the limit of \(ChangeLimits.counter)",
                    at: seqOffset)
            }
            entries.append(VersionVector.Entry(device: device, seq: seq))
        }
        guard let vector = VersionVector(sortedEntries: entries) else {
            throw CodecError(.notCanonical, "the entries of \(what()) are unsorted, repeated or zero", at: start)
        }
        return vector
    }

    /// Reads what ``BinaryWriter/write(device:people:)`` writes.
    mutating func readDevice(_ what: @autoclosure () -> String, people: Bool = false) throws(CodecError) -> Device {
        let id = DeviceID(try readID(what()))
        let name = try nextString("the name of \(what())", limit: SyncMessage.Limits.nameBytes)
        guard people else { return Device(id: id, name: name) }
        return Device(
            id: id, name: name, person: try nextString("the person of \(what())", limit: SyncMessage.Limits.nameBytes))
    }

    /// Reads what ``BinaryWriter/write(devices:people:)`` writes.
    mutating func readDevices(_ what: @autoclosure () -> String, people: Bool = false) throws(CodecError) -> [Device] {
        let count = try nextCount(
            "the number of \(what())", elementSize: people ? 18 : 17, limit: SyncMessage.Limits.devices)
        var devices: [Device] = []
        devices.reserveCapacity(count)
        for _ in 0..<count {
            let offset = offset
            let device = try readDevice("one of \(what())", people: people)
            if let last = devices.last, !(last.id < device.id) {
                throw CodecError(.notCanonical, "\(what()) are out of order or repeated", at: offset)
            }
            devices.append(device)
        }
        return devices
    }
}

extension BinaryReader {
    /// Reads a list of blob references: a count (at most ``SyncMessage/Limits/wantedBlobs``), then the references,
    /// strictly ascending.
    mutating func readBlobReferences(_ what: String) throws(CodecError) -> [BlobReference] {
        let start = offset
        let count = try nextCount(
            "the number of blobs \(what)", elementSize: 33, limit: SyncMessage.Limits.wantedBlobs)
        var references: [BlobReference] = []
        references.reserveCapacity(count)
        for _ in 0..<count {
            let reference = try nextBlobReference(limit: SyncMessage.Limits.blobMessageBytes)
            if let last = references.last, !(last < reference) {
                throw CodecError(.notCanonical, "the blobs \(what) are out of order or repeated", at: start)
            }
            references.append(reference)
        }
        return references
    }
}
