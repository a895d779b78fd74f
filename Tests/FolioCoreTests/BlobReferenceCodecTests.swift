import FolioCore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A change's list of blob references: canonical, round-tripping through a change and through a run, covered by the
/// hash, and absent from the encoding of a change without blobs.
@Suite(.workPool) struct BlobReferenceCodecTests {
    static let blobs = [
        BlobReference(to: Data(repeating: 1, count: 5_000)), BlobReference(to: Data("cover.png".utf8)),
        BlobReference(to: Data()),
    ]

    private func change(_ kind: ChangeKind, blobs: [BlobReference]) -> Change {
        let device = TestDevices.pool[0]
        return Change(
            document: TestDevices.document, id: ChangeID(device: device, seq: 2), parents: [fakeHash("p")],
            vector: VersionVector([(device, UInt64(2))]), lamport: 4, wallTime: Timestamp(millisecondsSince1970: 9),
            kind: kind, blobs: blobs)
    }

    @Test(arguments: KindSample.all)
    func aChangeWithBlobsRoundTrips(_ sample: KindSample) throws {
        let original = change(sample.kind, blobs: Self.blobs)
        #expect(original.blobs == Self.blobs.sorted())
        let bytes = original.encoded()
        let decoded = try Change(decoding: bytes, document: original.document)
        #expect(decoded.hash == original.hash)
        #expect(decoded.blobs == original.blobs)
        #expect(decoded.kind == original.kind)
        #expect(decoded.encoded() == bytes)
    }

    /// The list goes before the kind, behind a tag of its own: without blobs, a change encodes as it always did,
    /// and its hash is unchanged; with them, the hash covers them.
    @Test func theListIsTheOnlyDifferenceAndTheHashCoversIt() {
        let kind = ChangeKind.edit(Edit(operations: Data([1, 2, 3])))
        let plain = change(kind, blobs: []).encoded()
        let one = change(kind, blobs: [Self.blobs[0]])
        let withBlob = one.encoded()
        let kindStart = plain.count - kind.encodedLength
        var expected = Array(plain[..<kindStart])
        expected += [4, 1] + Self.blobs[0].hash.bytes + varint(UInt64(Self.blobs[0].size))
        expected += plain[kindStart...]
        #expect(withBlob == expected)
        #expect(one.hash != change(kind, blobs: []).hash)
        #expect(one.hash != change(kind, blobs: [Self.blobs[1]]).hash)
        #expect(one.hash != change(kind, blobs: [BlobReference(hash: Self.blobs[0].hash, size: 1)]).hash)
    }

    @Test func aRunKeepsTheBlobsOfItsChanges() throws {
        var history = HistoryBuilder()
        let root = history.append(device: 0, parents: [])
        let document = TestDevices.document
        let device = root.id.device
        let withBlobs = Change(
            document: document, id: ChangeID(device: device, seq: 2), parents: [root.hash],
            vector: VersionVector([(device, UInt64(2))]), lamport: 2, wallTime: root.wallTime,
            kind: .edit(Edit(operations: Data([1, 0, 5, 65, 66, 67, 68, 69]))), blobs: Self.blobs)
        let after = Change(
            document: document, id: ChangeID(device: device, seq: 3), parents: [withBlobs.hash],
            vector: VersionVector([(device, UInt64(3))]), lamport: 3, wallTime: root.wallTime,
            kind: .baseline(contents: Data("x".utf8)), blobs: [Self.blobs[2]])
        let run = [root, withBlobs, after]
        let bytes = try ChangeRunCodec.encode(run, of: document) { _ in nil }
        let decoded = try ChangeRunCodec.decode(bytes, document: document) { _ in nil }
        #expect(decoded.map(\.hash) == run.map(\.hash))
        #expect(decoded.map(\.blobs) == run.map(\.blobs))
        #expect(decoded.map(\.kind) == run.map(\.kind))
    }

    /// Every other way to write the list is refused: empty, out of order, repeated, listed twice, a size beyond
    /// the limit, cut short.
    @Test func nonCanonicalListsAreRefused() throws {
        let kind = ChangeKind.lifecycle(.delete)
        let base = change(kind, blobs: [])
        let plain = base.encoded()
        let kindStart = plain.count - kind.encodedLength
        let head = Array(plain[..<kindStart])
        let tail = Array(plain[kindStart...])
        let sorted = Self.blobs.sorted()
        func refs(_ list: [BlobReference]) -> [UInt8] {
            list.flatMap { $0.hash.bytes + varint(UInt64($0.size)) }
        }
        let cases: [(String, [UInt8], CodecErrorCode)] = [
            ("empty", head + [4, 0] + tail, .notCanonical),
            ("descending", head + [4, 2] + refs([sorted[1], sorted[0]]) + tail, .notCanonical),
            ("repeated", head + [4, 2] + refs([sorted[0], sorted[0]]) + tail, .notCanonical),
            ("twice", head + [4, 1] + refs([sorted[0]]) + [4, 1] + refs([sorted[1]]) + tail, .notCanonical),
            ("oversized", head + [4, 1] + sorted[0].hash.bytes + varint(1 << 40) + tail, .oversized),
            ("cut in the hash", head + [4, 1] + Array(sorted[0].hash.bytes.prefix(20)), .truncated),
            ("too many", head + [4] + varint(1 << 17) + tail, .oversized),
        ]
        for (name, bytes, code) in cases {
            var refusal: CodecError?
            do {
                _ = try Change(decoding: bytes, document: base.document)
            } catch let error as CodecError {
                refusal = error
            }
            #expect(refusal?.code == code, "\(name): \(String(describing: refusal))")
        }
        // The honest list decodes.
        let honest = try Change(decoding: head + [4, 3] + refs(sorted) + tail, document: base.document)
        #expect(honest.blobs == sorted)
    }

    private func varint(_ value: UInt64) -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(varint: value)
        return writer.bytes
    }
}

extension ChangeKind {
    /// The length of the kind's own encoding, the last bytes of a change's.
    fileprivate var encodedLength: Int {
        let device = TestDevices.pool[0]
        let change = Change(
            document: TestDevices.document, id: ChangeID(device: device, seq: 1), parents: [],
            vector: VersionVector([(device, UInt64(1))]), lamport: 1, wallTime: Timestamp(millisecondsSince1970: 0),
            kind: .lifecycle(.delete))
        let withKind = Change(
            document: TestDevices.document, id: ChangeID(device: device, seq: 1), parents: [],
            vector: VersionVector([(device, UInt64(1))]), lamport: 1, wallTime: Timestamp(millisecondsSince1970: 0),
            kind: self)
        // The delete's kind is two bytes (tag and event); the headers are the same.
        return withKind.encoded().count - change.encoded().count + 2
    }
}
