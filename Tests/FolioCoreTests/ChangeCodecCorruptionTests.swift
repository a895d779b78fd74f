import FolioCore
import FolioTestWorkPool
import Foundation
import Testing

/// Writes the format-1 layout by hand, field by field, so that a test can break exactly one field.
///
/// Integer fields are raw bytes, so a test can also write non-canonical varints.
struct RawChange {
    static func varint(_ value: UInt64) -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(varint: value)
        return writer.bytes
    }

    static let device = TestDevices.pool[0]
    static let peer = TestDevices.pool[1]
    static let lowHash = [fakeHash("p0"), fakeHash("p1")].min()!
    static let highHash = [fakeHash("p0"), fakeHash("p1")].max()!

    var version: UInt8 = 1
    var device = RawChange.device.uuid
    var seq = RawChange.varint(2)
    var lamport = RawChange.varint(5)
    var wallTime: Int64 = 1_767_225_600_000
    var parentCount: [UInt8]? = nil
    var parents: [ChangeHash] = [RawChange.lowHash, RawChange.highHash]
    var vectorCount: [UInt8]? = nil
    var vector: [(UUIDBytes, [UInt8])] = [
        (RawChange.device.uuid, RawChange.varint(2)), (RawChange.peer.uuid, RawChange.varint(1)),
    ]
    /// Edit, plain intent, one byte of operations: "a".
    var kind: [UInt8] = [0, 0, 1, 0x61]
    var trailing: [UInt8] = []

    /// The bytes and the offset where each field starts.
    func build() -> (bytes: [UInt8], offsets: [String: Int]) {
        var writer = BinaryWriter()
        var offsets: [String: Int] = [:]
        writer.write(byte: version)
        writer.write(fixed: device.high)
        writer.write(fixed: device.low)
        offsets["seq"] = writer.bytes.count
        writer.write(raw: seq)
        offsets["lamport"] = writer.bytes.count
        writer.write(raw: lamport)
        writer.write(signed: wallTime)
        offsets["parents"] = writer.bytes.count
        writer.write(raw: parentCount ?? RawChange.varint(UInt64(parents.count)))
        for parent in parents { writer.write(raw: parent.bytes) }
        offsets["vector"] = writer.bytes.count
        writer.write(raw: vectorCount ?? RawChange.varint(UInt64(vector.count)))
        for (uuid, seq) in vector {
            writer.write(fixed: uuid.high)
            writer.write(fixed: uuid.low)
            writer.write(raw: seq)
        }
        offsets["kind"] = writer.bytes.count
        writer.write(raw: kind)
        offsets["trailing"] = writer.bytes.count
        writer.write(raw: trailing)
        return (writer.bytes, offsets)
    }

    var bytes: [UInt8] { build().bytes }
}

/// One way to break an encoding, and the error it must produce.
struct Corruption: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    var code: CodecErrorCode
    /// The offset the error must report, when the test pins it.
    var offset: Int?
    var testDescription: String { name }

    init(_ name: String, _ code: CodecErrorCode, at field: String? = nil, _ edit: (inout RawChange) -> Void) {
        var raw = RawChange()
        edit(&raw)
        let (bytes, offsets) = raw.build()
        self.name = name
        self.bytes = bytes
        self.code = code
        self.offset = field.map { $0 == "start" ? 0 : offsets[$0]! }
    }

    static let all: [Corruption] = [
        // Format version.
        Corruption("format version 2", .unsupportedVersion, at: "start") { $0.version = 2 },
        Corruption("format version 0", .unsupportedVersion, at: "start") { $0.version = 0 },
        Corruption("format version 255", .unsupportedVersion, at: "start") { $0.version = 255 },
        // Header integers.
        Corruption("sequence number 0", .invalidValue, at: "seq") { $0.seq = [0] },
        Corruption("lamport 0", .invalidValue, at: "lamport") { $0.lamport = [0] },
        Corruption("padded sequence number", .notCanonical, at: "seq") { $0.seq = [0x82, 0x00] },
        Corruption("padded lamport", .notCanonical, at: "lamport") { $0.lamport = [0x85, 0x80, 0x00] },
        Corruption("lamport over 64 bits", .oversized, at: "lamport") {
            $0.lamport = [UInt8](repeating: 0xFF, count: 9) + [0x02]
        },
        Corruption("lamport of 11 bytes", .oversized, at: "lamport") {
            $0.lamport = [UInt8](repeating: 0xFF, count: 10) + [0x01]
        },
        // Parents.
        Corruption("unsorted parents", .notCanonical, at: "parents") {
            $0.parents = [RawChange.highHash, RawChange.lowHash]
        },
        Corruption("repeated parent", .notCanonical, at: "parents") {
            $0.parents = [RawChange.lowHash, RawChange.lowHash]
        },
        Corruption("huge parent count", .oversized, at: "parents") { $0.parentCount = RawChange.varint(1 << 40) },
        Corruption("parent count of UInt64.max", .oversized, at: "parents") { $0.parentCount = RawChange.varint(.max) },
        Corruption("parent count past the input", .truncated, at: "parents") {
            $0.parentCount = RawChange.varint(1000)
        },
        Corruption("padded parent count", .notCanonical, at: "parents") { $0.parentCount = [0x82, 0x00] },
        // Vector.
        Corruption("vector without the change", .invalidValue, at: "vector") {
            $0.vector = [(RawChange.peer.uuid, RawChange.varint(1))]
        },
        Corruption("vector with an older seq for the change's device", .invalidValue, at: "vector") {
            $0.vector[0].1 = RawChange.varint(1)
        },
        Corruption("vector with a newer seq for the change's device", .invalidValue, at: "vector") {
            $0.vector[0].1 = RawChange.varint(3)
        },
        Corruption("unsorted vector", .notCanonical, at: "vector") { $0.vector.reverse() },
        Corruption("repeated vector device", .notCanonical, at: "vector") {
            $0.vector = [(RawChange.device.uuid, RawChange.varint(2)), (RawChange.device.uuid, RawChange.varint(2))]
        },
        Corruption("zero vector entry", .notCanonical, at: "vector") { $0.vector[1].1 = [0] },
        Corruption("huge vector count", .oversized, at: "vector") { $0.vectorCount = RawChange.varint(1 << 30) },
        Corruption("vector count past the input", .truncated, at: "vector") { $0.vectorCount = RawChange.varint(100) },
        Corruption("padded vector seq", .notCanonical) { $0.vector[1].1 = [0x81, 0x00] },
        // Kind.
        Corruption("unknown kind tag 5", .invalidValue, at: "kind") { $0.kind = [5] },
        Corruption("unknown kind tag 255", .invalidValue, at: "kind") { $0.kind = [255, 0, 0] },
        Corruption("missing kind", .truncated, at: "kind") { $0.kind = [] },
        Corruption("unknown edit intent", .invalidValue) { $0.kind = [0, 3, 0] },
        Corruption("undo of change 0", .invalidValue) {
            $0.kind = [0, 1] + RawChange.peer.uuid.bytes + [0, 0]
        },
        Corruption("huge operations length", .oversized) { $0.kind = [0, 0] + RawChange.varint(1 << 40) },
        Corruption("operations length past the input", .truncated) {
            $0.kind = [0, 0] + RawChange.varint(1_000_000) + [1, 2]
        },
        Corruption("padded operations length", .notCanonical) { $0.kind = [0, 0, 0x81, 0x00, 0x61] },
        Corruption("unknown lifecycle event", .invalidValue) { $0.kind = [1, 6] },
        Corruption("a version's name cut short", .truncated) { $0.kind = [1, 5, 4, 0x61] },
        Corruption("invalid UTF-8 in a version's name", .invalidValue) { $0.kind = [1, 5, 2, 0xFF, 0xFE] },
        Corruption("unknown container", .invalidValue) { $0.kind = [1, 2, 2] },
        Corruption("invalid UTF-8 in a created name", .invalidValue) { $0.kind = [1, 0, 2, 0xFF, 0xFE, 1, 0x74, 0] },
        Corruption("invalid UTF-8 in a type", .invalidValue) { $0.kind = [1, 0, 1, 0x6E, 2, 0xC0, 0xAF, 0] },
        Corruption("cut UTF-8 sequence in a new name", .invalidValue) { $0.kind = [1, 1, 2, 0xE2, 0x82] },
        Corruption("UTF-8 surrogate in a new name", .invalidValue) { $0.kind = [1, 1, 3, 0xED, 0xA0, 0x80] },
        Corruption("name over the text limit", .oversized) { $0.kind = [1, 1] + RawChange.varint(64 << 10 + 1) },
        Corruption("unknown resolution strategy", .invalidValue) { $0.kind = [3, 6, 0, 0, 0] },
        Corruption("invalid UTF-8 in a custom strategy", .invalidValue) { $0.kind = [3, 4, 1, 0x80, 0, 0, 0] },
        Corruption("resolution contents flag 2", .invalidValue) { $0.kind = [3, 0, 0, 0, 2] },
        Corruption("unsorted chosen heads", .notCanonical) {
            $0.kind = [3, 2, 2] + RawChange.highHash.bytes + RawChange.lowHash.bytes + [0, 0]
        },
        Corruption("repeated discarded heads", .notCanonical) {
            $0.kind = [3, 2, 0, 2] + RawChange.lowHash.bytes + RawChange.lowHash.bytes + [0]
        },
        Corruption("huge chosen count", .oversized) { $0.kind = [3, 2] + RawChange.varint(1 << 32) },
        // Trailing bytes.
        Corruption("one trailing byte", .trailingBytes, at: "trailing") { $0.trailing = [0] },
        Corruption("a second change appended", .trailingBytes, at: "trailing") { $0.trailing = RawChange().bytes },
    ]
}

@Suite(.workPool) struct ChangeCodecCorruptionTests {
    /// The hand-written layout is the codec's: the unbroken raw change decodes to the change `Change.init` makes.
    @Test func theHandWrittenLayoutDecodes() throws {
        let raw = RawChange()
        let decoded = try Change(decoding: raw.bytes, document: TestDevices.document)
        let expected = Change(
            document: TestDevices.document, id: ChangeID(device: RawChange.device, seq: 2),
            parents: [RawChange.lowHash, RawChange.highHash],
            vector: VersionVector(pairs: [(RawChange.device, 2), (RawChange.peer, 1)]), lamport: 5,
            wallTime: Timestamp(millisecondsSince1970: 1_767_225_600_000),
            kind: .edit(Edit(operations: Data("a".utf8))))
        #expect(decoded == expected)
        #expect(expected.encoded() == raw.bytes)
        #expect(decoded.kind == expected.kind)
    }

    @Test(arguments: Corruption.all)
    func corruptionIsRejectedWithItsCode(_ corruption: Corruption) {
        do {
            let change = try Change(decoding: corruption.bytes, document: TestDevices.document)
            Issue.record("\(corruption.name) decoded as \(change.id) \(change.kind)")
        } catch let error as CodecError {
            #expect(error.code == corruption.code, "\(corruption.name): \(error)")
            if let offset = corruption.offset {
                #expect(error.offset == offset, "\(corruption.name): \(error)")
            }
            #expect(error.offset >= 0 && error.offset <= corruption.bytes.count)
            #expect(error.description.hasSuffix("(at byte \(error.offset))"))
        } catch {
            Issue.record("threw \(error), not CodecError")
        }
    }

    @Test func theVersionErrorNamesBothVersions() throws {
        var raw = RawChange()
        raw.version = 2
        let error = try #require(throws: CodecError.self) {
            try Change(decoding: raw.bytes, document: TestDevices.document)
        }
        #expect(error.message.contains("2"))
        #expect(error.message.contains("1"))
    }

    @Test func codesAreDistinctAndNamed() {
        let codes: [CodecErrorCode] = [
            .truncated, .oversized, .invalidValue, .unsupportedVersion, .notCanonical, .trailingBytes,
        ]
        #expect(Set(codes).count == codes.count)
        #expect(
            codes.map(\.description) == [
                "truncated", "oversized", "invalidValue", "unsupportedVersion", "notCanonical", "trailingBytes",
            ])
    }

    /// A hostile count is refused before anything is allocated for it: decoding a few bytes that announce 2⁴⁰
    /// operations bytes, 2⁴⁰ parents or 2³⁰ vector entries takes no time to speak of. Twenty rounds, so that a debug
    /// build sharing the machine with the rest of the suite stays far below the bound, which room made and filled
    /// for any one of those counts (gigabytes at least) would pass.
    @Test func hostileCountsFailFast() {
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for _ in 0..<20 {
                for corruption in Corruption.all where corruption.code == .oversized {
                    _ = try? Change(decoding: corruption.bytes, document: TestDevices.document)
                }
            }
        }
        #expect(elapsed < .seconds(5), "rejecting hostile counts took \(elapsed)")
    }
}
