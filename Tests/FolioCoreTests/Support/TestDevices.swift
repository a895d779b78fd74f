import FolioCore
import FolioTesting
import Foundation

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
