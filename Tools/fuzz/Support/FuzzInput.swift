import FolioCore

/// Reads a fuzzer's input as a stream of choices, FuzzedDataProvider-style: each read takes a few bytes, and an
/// exhausted input reads as zeros, so every input is a valid script and a longer one a longer script.
struct FuzzInput {
    private let data: [UInt8]
    private var offset = 0

    init(_ buffer: UnsafeRawBufferPointer) {
        data = Array(buffer)
    }

    init(_ bytes: [UInt8]) {
        data = bytes
    }

    var isAtEnd: Bool { offset >= data.count }

    mutating func byte() -> UInt8 {
        guard offset < data.count else { return 0 }
        defer { offset += 1 }
        return data[offset]
    }

    mutating func bool() -> Bool { byte() & 1 == 1 }

    /// A number below `bound` (which must be positive), from one byte, or two when `bound` exceeds 256.
    mutating func int(below bound: Int) -> Int {
        precondition(bound > 0)
        if bound <= 256 { return Int(byte()) % bound }
        return (Int(byte()) << 8 | Int(byte())) % bound
    }

    /// Eight bytes, big-endian.
    mutating func uint64() -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
        return value
    }

    /// A number that is usually small but sometimes sits at an edge a decoder or an adder may mishandle.
    mutating func interestingUInt64() -> UInt64 {
        switch byte() % 8 {
        case 0, 1, 2: UInt64(byte() % 8)
        case 3: UInt64(byte())
        case 4: UInt64(Int64.max) - UInt64(byte() % 4)
        case 5: UInt64.max - UInt64(byte() % 4)
        case 6: UInt64(1) << UInt64(byte() % 64)
        default: uint64()
        }
    }

    /// Up to `limit` raw bytes, length first.
    mutating func bytes(upTo limit: Int) -> [UInt8] {
        let count = min(int(below: limit + 1), data.count - min(offset, data.count))
        defer { offset += count }
        return Array(data[offset..<offset + count])
    }

    /// The rest of the input.
    mutating func rest() -> [UInt8] {
        defer { offset = data.count }
        return offset < data.count ? Array(data[offset...]) : []
    }

    /// A string of up to `limit` bytes, repaired into UTF-8.
    mutating func string(upTo limit: Int) -> String {
        String(decoding: bytes(upTo: limit), as: UTF8.self)
    }

    /// One of `choices`.
    mutating func pick<T>(_ choices: [T]) -> T {
        choices[int(below: choices.count)]
    }
}

/// Fixed identities, so that seeds and reproducers mean the same thing in every run.
enum FuzzIDs {
    /// The signing key of fuzz device `number`, the same in every run.
    static func key(_ number: UInt64) -> DeviceKey {
        DeviceKey(using: SeededIdentifierSource(seed: 0xD0D0_0000_0000_0000 | number))
    }
    static func device(_ number: UInt64) -> DeviceID { key(number).id }
    static func document(_ number: UInt64) -> DocumentID {
        DocumentID(UUIDBytes(high: 0xDC00_0000_0000_0000 | number, low: number))
    }
    static let epoch = Timestamp(millisecondsSince1970: 1_750_000_000_000)
}
