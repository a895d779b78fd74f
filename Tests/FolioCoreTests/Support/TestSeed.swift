import Foundation
import FolioCore

/// The seed of a randomized test: `FOLIO_SEED` from the environment to replay a failure, otherwise a fresh one.
///
/// Every randomized test puts the seed in its failure messages, so a failing run can be replayed exactly.
enum TestSeed {
    static func make() -> UInt64 {
        if let text = ProcessInfo.processInfo.environment["FOLIO_SEED"], let seed = UInt64(text) {
            return seed
        }
        return UInt64.random(in: 0...UInt64.max)
    }
}

extension SplitMix64 {
    /// A uniformly chosen integer in `range`.
    mutating func int(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }

    /// `true` with probability `numerator / denominator`.
    mutating func chance(_ numerator: Int, in denominator: Int) -> Bool {
        Int.random(in: 0..<denominator, using: &self) < numerator
    }
}

/// A fixed pool of devices, sorted so that index order is device order (which makes tie-breaks predictable).
enum TestDevices {
    static let pool: [DeviceID] = {
        let source = SeededIdentifierSource(seed: 0xF011_0C0E)
        return (0..<8).map { _ in DeviceID(using: source) }.sorted()
    }()

    static let document = DocumentID(UUIDBytes("0f0110d0-c0de-4000-8000-000000000001")!)
    static let otherDocument = DocumentID(UUIDBytes("0f0110d0-c0de-4000-8000-000000000002")!)
}

extension VersionVector {
    /// `VersionVector(pairs)` for array literals, which cannot infer the element type of `some Sequence<…>`.
    init(pairs: [(DeviceID, UInt64)]) {
        self.init(pairs)
    }
}
