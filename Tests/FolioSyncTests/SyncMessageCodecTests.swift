import FolioCore
import FolioSync
import FolioTestWorkPool
import FolioTesting
import Testing

@Suite(.workPool) struct SyncMessageCodecTests {
    static let a = Device.named("A"), b = Device.named("B"), c = Device.named("C")

    static func sampleChanges() -> [Change] {
        var maker = ChangeMaker(document: Fixtures.document)
        let a1 = maker.make(a, "a1")
        let b1 = maker.make(b, on: [a1], "b1")
        maker.make(a, on: [a1], "a2")
        maker.make(c, on: [b1], "c1 with a longer text, é and 🎉")
        return maker.made
    }

    static func samples() -> [SyncMessage] {
        let changes = sampleChanges()
        return [
            .hello(
                SyncHello(
                    device: a, session: 0xDEAD_BEEF_0000_0001,
                    vectors: [
                        Fixtures.document: changes[3].vector, Fixtures.otherDocument: VersionVector(),
                        Fixtures.thirdDocument: changes[0].vector,
                    ],
                    heads: [
                        Fixtures.document: [changes[3].hash, changes[2].hash],
                        Fixtures.otherDocument: [changes[1].hash],
                    ],
                    devices: [c, a, b])),
            .hello(
                SyncHello(device: Device(id: b.id, name: ""), session: 7, replyTo: 0xFFFF_FFFF_FFFF_FFFF, vectors: [:])),
            .request(document: Fixtures.document, since: changes[2].vector),
            .request(document: Fixtures.otherDocument, since: VersionVector()),
            .changes(document: Fixtures.document, changes: changes.map(EncodedChange.init), heads: []),
            .changes(
                document: Fixtures.document, changes: changes.map(EncodedChange.init),
                heads: [
                    SignedHead(signing: changes[3], with: .named("C")),
                    SignedHead(signing: changes[2], with: .named("A")),
                ]
                .sorted { $0.change.device < $1.change.device }),
            .changes(document: Fixtures.document, changes: [], heads: []),
            .done(from: 1, to: UInt64.max),
        ]
    }

    @Test func everyKindOfMessageRoundTrips() throws {
        for message in Self.samples() {
            let bytes = message.encoded()
            #expect(bytes.first == SyncMessage.formatVersion)
            let decoded = try SyncMessage(decoding: bytes)
            #expect(decoded == message, "\(message)")
            #expect(decoded.encoded() == bytes, "re-encoding \(message) changed its bytes")
        }
    }

    @Test func decodedChangesKeepTheirHashes() throws {
        let changes = Self.sampleChanges()
        let decoded = try SyncMessage(
            decoding: SyncMessage.changes(
                document: Fixtures.document, changes: changes.map(EncodedChange.init), heads: []
            ).encoded())
        guard case .changes(_, let received, _) = decoded else {
            Issue.record("decoded \(decoded)")
            return
        }
        #expect(received.map(\.change.hash) == changes.map(\.hash))
    }

    @Test func encodingDoesNotDependOnDictionaryOrder() {
        var vectors: [(DocumentID, VersionVector)] = []
        for index in UInt64(1)...40 {
            let document = DocumentID(UUIDBytes(high: index &* 0x9E37_79B9_7F4A_7C15, low: index))
            let pairs: [(DeviceID, UInt64)] = [(Self.a.id, index), (Self.b.id, 41 - index)]
            vectors.append((document, VersionVector(pairs)))
        }
        var forward: [DocumentID: VersionVector] = [:]
        for (document, vector) in vectors { forward[document] = vector }
        var backward: [DocumentID: VersionVector] = [:]
        for (document, vector) in vectors.reversed() { backward[document] = vector }
        let first = SyncMessage.hello(
            SyncHello(device: Self.a, session: 1, vectors: forward, devices: [Self.b, Self.a]))
        let second = SyncMessage.hello(
            SyncHello(device: Self.a, session: 1, vectors: backward, devices: [Self.a, Self.b]))
        #expect(first.encoded() == second.encoded())
    }

    @Test func everyTruncationIsRefusedWithATypedError() {
        for message in Self.samples() {
            let bytes = message.encoded()
            for length in 0..<bytes.count {
                #expect(throws: CodecError.self, "\(message) cut to \(length) bytes") {
                    try SyncMessage(decoding: Array(bytes.prefix(length)))
                }
            }
        }
    }

    /// Format 4 writes each device of a hello with its person; formats 2 and 3 leave persons out and keep their
    /// bytes, so that a peer of an earlier build reads them as before.
    @Test func format4CarriesPersonsAndEarlierFormatsLeaveThemOut() throws {
        let anna = Device(id: Self.a.id, name: "Anna's iPad", person: "Anna")
        let ben = Device(id: Self.b.id, name: "", person: "Ben Ørsted 🎉")
        let hello = SyncMessage.hello(
            SyncHello(device: anna, session: 9, vectors: [:], devices: [ben, anna, Self.c]))
        let bytes = hello.encoded(format: SyncMessage.peopleFormatVersion)
        #expect(try SyncMessage(decoding: bytes) == hello)
        let unnamed = SyncMessage.hello(
            SyncHello(
                device: Device(id: anna.id, name: anna.name), session: 9, vectors: [:],
                devices: [Device(id: ben.id, name: ""), Device(id: anna.id, name: anna.name), Self.c]))
        for format in [SyncMessage.formatVersion, SyncMessage.runFormatVersion] {
            let earlier = hello.encoded(format: format)
            #expect(try SyncMessage(decoding: earlier) == unnamed, "format \(format)")
            var same = unnamed.encoded(format: format)
            #expect(earlier == same, "format \(format) writes no person")
            same[0] = SyncMessage.peopleFormatVersion
            // The same bytes read as format 4 lack the persons: they do not decode.
            #expect(throws: CodecError.self) { try SyncMessage(decoding: same) }
        }
        // A person is bounded like a name.
        let long = SyncMessage.hello(
            SyncHello(
                device: Device(id: anna.id, name: "", person: String(repeating: "p", count: (64 << 10) + 1)),
                session: 1, vectors: [:]))
        let error = #expect(throws: CodecError.self) {
            try SyncMessage(decoding: long.encoded(format: SyncMessage.peopleFormatVersion))
        }
        #expect(error?.code == .oversized)
        // Every cut of the format 4 hello is refused as truncated.
        for end in 0..<bytes.count {
            #expect(throws: CodecError.self) { try SyncMessage(decoding: Array(bytes[..<end])) }
        }
    }

    @Test func trailingBytesAreRefused() {
        for message in Self.samples() {
            let error = #expect(throws: CodecError.self) { try SyncMessage(decoding: message.encoded() + [0]) }
            #expect(error?.code == .trailingBytes)
        }
    }

    @Test func unknownVersionsAndTagsAreRefused() throws {
        var bytes = SyncMessage.done(from: 1, to: 2).encoded()
        // Version 1 carried changes without signed heads; one past the newest format is unknown.
        for version in [1, SyncMessage.newestFormat + 1] {
            bytes[0] = version
            #expect(
                (#expect(throws: CodecError.self) { try SyncMessage(decoding: bytes) })?.code == .unsupportedVersion)
        }
        bytes[0] = SyncMessage.formatVersion
        bytes[1] = 99
        #expect((#expect(throws: CodecError.self) { try SyncMessage(decoding: bytes) })?.code == .invalidValue)
        // Format 3 reads format 2's messages, and a run's tag only there.
        bytes = SyncMessage.done(from: 1, to: 2).encoded(format: SyncMessage.runFormatVersion)
        #expect(try SyncMessage(decoding: bytes) == .done(from: 1, to: 2))
        bytes[0] = SyncMessage.formatVersion
        bytes[1] = 4
        #expect((#expect(throws: CodecError.self) { try SyncMessage(decoding: bytes) })?.code == .invalidValue)
    }

    @Test func headsOfAnotherDocumentOrOutOfOrderAreRefused() {
        let changes = Self.sampleChanges()
        let headA = SignedHead(signing: changes[2], with: .named("A"))
        let headC = SignedHead(signing: changes[3], with: .named("C"))
        let encodedChanges = changes.map(EncodedChange.init)
        let message = SyncMessage.changes(document: Fixtures.document, changes: encodedChanges, heads: [headA, headC])
            .encoded()
        // The heads come last, in device order: swap them.
        let size = headA.encoded().count
        let first = Array(message[(message.count - size - headC.encoded().count)...].prefix(size))
        let swapped = Array(message.dropLast(2 * size)) + Array(message.suffix(size)) + first
        if headA.encoded().count == headC.encoded().count {
            #expect((#expect(throws: CodecError.self) { try SyncMessage(decoding: swapped) })?.code == .notCanonical)
        }
        // A head of another document in a message of this one.
        let other = SignedHead(
            document: Fixtures.otherDocument, change: headA.change, hash: headA.hash, signedWith: .named("A"))
        var writer = BinaryWriter()
        writer.write(raw: message.dropLast(2 * size + 1))
        writer.write(varint: 1)
        writer.write(head: other)
        #expect((#expect(throws: CodecError.self) { try SyncMessage(decoding: writer.bytes) })?.code == .invalidValue)
    }

    @Test func documentsOutOfOrderAreRefused() {
        // Two documents, hand-encoded in descending order.
        var bytes: [UInt8] = [SyncMessage.formatVersion, 0]
        bytes += Self.a.id.uuid.bytes + [1, UInt8(ascii: "A")] + [UInt8](repeating: 0, count: 8) + [0]
        bytes += [2] + Fixtures.otherDocument.uuid.bytes + [0, 0] + Fixtures.document.uuid.bytes + [0, 0]
        bytes += [0]
        let error = #expect(throws: CodecError.self) { try SyncMessage(decoding: bytes) }
        #expect(error?.code == .notCanonical)
        // The same bytes in ascending order decode.
        var sorted: [UInt8] = [SyncMessage.formatVersion, 0]
        sorted += Self.a.id.uuid.bytes + [1, UInt8(ascii: "A")] + [UInt8](repeating: 0, count: 8) + [0]
        sorted += [2] + Fixtures.document.uuid.bytes + [0, 0] + Fixtures.otherDocument.uuid.bytes + [0, 0]
        sorted += [0]
        #expect(throws: Never.self) { try SyncMessage(decoding: sorted) }
    }

    @Test func emptyEntriesOfAHelloSayNothing() throws {
        let hello = SyncHello(
            device: Self.a, session: 1, vectors: [Fixtures.document: VersionVector()],
            heads: [Fixtures.otherDocument: []])
        #expect(hello.vectors.isEmpty && hello.heads.isEmpty)
        #expect(try SyncMessage(decoding: SyncMessage.hello(hello).encoded()) == .hello(hello))
    }

    @Test func unsortedHeadsAreRefused() {
        let changes = Self.sampleChanges().map(\.hash).sorted()
        var bytes: [UInt8] = [SyncMessage.formatVersion, 0]
        bytes += Self.a.id.uuid.bytes + [0] + [UInt8](repeating: 0, count: 8) + [0]
        bytes += [1] + Fixtures.document.uuid.bytes + [0] + [2] + changes[1].bytes + changes[0].bytes + [0]
        let error = #expect(throws: CodecError.self) { try SyncMessage(decoding: bytes) }
        #expect(error?.code == .notCanonical)
    }

    @Test func aDamagedChangeIsRefusedWithItsPlaceInTheMessage() {
        let changes = Self.sampleChanges().map(EncodedChange.init)
        var bytes = SyncMessage.changes(document: Fixtures.document, changes: changes, heads: []).encoded()
        // The first change starts after version, tag, document and count (1 + 1 + 16 + 1) and its length; its own
        // first byte is its format version.
        let start = 19 + 1
        bytes[start] = 0xEE
        let error = #expect(throws: CodecError.self) { try SyncMessage(decoding: bytes) }
        #expect(error?.message.contains("change 0") == true, "\(String(describing: error))")
        #expect(error?.offset ?? 0 >= start)
    }

    @Test func hostileCountsDoNotAllocate() {
        // A changes message announcing 2^40 changes in a few bytes.
        var writer: [UInt8] = [SyncMessage.formatVersion, 2] + Fixtures.document.uuid.bytes
        writer += [0x80, 0x80, 0x80, 0x80, 0x80, 0x20]
        let error = #expect(throws: CodecError.self) { try SyncMessage(decoding: writer) }
        #expect(error?.code == .oversized)
    }
}
