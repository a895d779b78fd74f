import FolioCore
import FolioTestWorkPool
import FolioTesting
import Testing

@Suite(.workPool) struct UUIDBytesTests {
    static let sample = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"

    @Test func parsesTheCanonicalForm() throws {
        let uuid = try #require(UUIDBytes(Self.sample))
        #expect(uuid.high == 0x6ba7_b810_9dad_11d1)
        #expect(uuid.low == 0x80b4_00c0_4fd4_30c8)
        #expect(
            uuid.bytes == [
                0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8,
            ])
        #expect(uuid.description == Self.sample)
        #expect(UUIDBytes(bytes: uuid.bytes) == uuid)
    }

    @Test func parsingIgnoresCaseAndAcceptsSubstrings() throws {
        #expect(UUIDBytes(Self.sample.uppercased()) == UUIDBytes(Self.sample))
        #expect(UUIDBytes("6BA7b810-9DAD-11d1-80B4-00c04FD430C8") == UUIDBytes(Self.sample))
        let embedded = "id=\(Self.sample);"
        let substring = embedded.dropFirst(3).dropLast()
        #expect(UUIDBytes(substring) == UUIDBytes(Self.sample))
        #expect(UUIDBytes("00000000-0000-0000-0000-000000000000") == UUIDBytes(high: 0, low: 0))
        #expect(UUIDBytes("ffffffff-ffff-ffff-ffff-ffffffffffff") == UUIDBytes(high: .max, low: .max))
    }

    @Test(arguments: [
        "",
        "6ba7b810",
        "6ba7b8109dad11d180b400c04fd430c8",
        "6ba7b810-9dad-11d1-80b4-00c04fd430c",
        "6ba7b810-9dad-11d1-80b4-00c04fd430c88",
        "6ba7b810-9dad-11d1-80b4-00c04fd430c8-",
        "{6ba7b810-9dad-11d1-80b4-00c04fd430c8}",
        " 6ba7b810-9dad-11d1-80b4-00c04fd430c8",
        "6ba7b810-9dad-11d1-80b4-00c04fd430c8 ",
        "6ba7b8109-dad-11d1-80b4-00c04fd430c8",
        "6ba7b810-9dad-11d180-b4-00c04fd430c8",
        "6ba7b810_9dad_11d1_80b4_00c04fd430c8",
        "6ba7b810-9dad-11d1-80b4-00c04fd430cg",
        "g0000000-0000-0000-0000-000000000000",
        "6ba7b810-9dad-11d1-80b4-00c04fd430c-",
        "6ba7b810-9dad-11d1-80b4-0xc04fd430c8",
        "6ba7b810-9dad-11d1-80b4-00c04fd430é",
        "6ba7b810-9dad-11d1-80b4-00c04fd43０c8",
        "------------------------------------",
        "6ba7b810+9dad-11d1-80b4-00c04fd430c8",
    ])
    func rejectsMalformedText(_ text: String) {
        #expect(UUIDBytes(text) == nil, "\(text.debugDescription) parsed")
    }

    @Test func textRoundTripsForManyValues() throws {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        for _ in 0..<500 {
            let uuid = UUIDBytes(high: generator.next(), low: generator.next())
            let text = uuid.description
            #expect(text.count == 36, "seed \(seed): \(text)")
            #expect(text == text.lowercased(), "seed \(seed): \(text)")
            #expect(UUIDBytes(text) == uuid, "seed \(seed): \(text) does not parse back")
            #expect(UUIDBytes(text.uppercased()) == uuid, "seed \(seed): \(text) uppercased does not parse back")
            #expect(UUIDBytes(bytes: uuid.bytes) == uuid, "seed \(seed): bytes of \(text)")
        }
    }

    @Test func ordersByBytes() {
        let values = [
            UUIDBytes(high: 0, low: 1), UUIDBytes(high: 0, low: .max), UUIDBytes(high: 1, low: 0),
            UUIDBytes(high: 0x8000_0000_0000_0000, low: 0), UUIDBytes(high: .max, low: .max),
        ]
        #expect(values == values.shuffled().sorted())
        for (lower, higher) in zip(values, values.dropFirst()) {
            #expect(lower < higher)
            #expect(lower.bytes.lexicographicallyPrecedes(higher.bytes))
            #expect(lower.description < higher.description)
        }
    }

    @Test func identitiesWrapTheirBytes() throws {
        let uuid = try #require(UUIDBytes(Self.sample))
        #expect(DeviceID(uuid).description == Self.sample)
        #expect(DocumentID(uuid).description == Self.sample)
        #expect(DeviceID(uuid) < DeviceID(UUIDBytes(high: uuid.high, low: uuid.low + 1)))
        #expect(DocumentID(uuid) < DocumentID(UUIDBytes(high: uuid.high + 1, low: 0)))
        let device = DeviceID(uuid)
        #expect(ChangeID(device: device, seq: 12).description == "\(Self.sample)#12")
        #expect(Device(id: device, name: "Anna's iPad").name == "Anna's iPad")
    }

    @Test func changeIDsOrderByDeviceThenSeq() {
        let low = TestDevices.pool[0]
        let high = TestDevices.pool[1]
        let ids = [
            ChangeID(device: high, seq: 1), ChangeID(device: low, seq: 10), ChangeID(device: low, seq: 2),
            ChangeID(device: high, seq: 3),
        ]
        #expect(
            ids.sorted() == [
                ChangeID(device: low, seq: 2), ChangeID(device: low, seq: 10), ChangeID(device: high, seq: 1),
                ChangeID(device: high, seq: 3),
            ])
    }
}
