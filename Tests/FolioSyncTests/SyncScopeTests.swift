import FolioCore
import FolioSync
import FolioTesting
import Testing

/// The scope frame a server sends first: one spelling of each scope, and hostile bytes refused with an error, never
/// a trap or an allocation the bytes cannot pay for.
@Suite struct SyncScopeTests {
    static func document(_ low: UInt64) -> DocumentID { DocumentID(UUIDBytes(high: 0x5C09E, low: low)) }

    @Test func scopesRoundTripAndSayWhatTheyGrant() throws {
        let (a, b, c) = (Self.document(1), Self.document(2), Self.document(3))
        let scopes: [SyncScope] = [
            .library(writes: true), .library(writes: false), .documents([:]), .documents([a: true, b: false]),
        ]
        for scope in scopes {
            let bytes = SyncFrame.scope(scope).encoded()
            #expect(try SyncFrame(decoding: bytes) == .scope(scope))
        }
        let documents = SyncScope.documents([a: true, b: false])
        #expect(documents.includes(a) && documents.includes(b) && !documents.includes(c))
        #expect(documents.writes(a) && !documents.writes(b) && !documents.writes(c))
        #expect(documents.writesAny && !SyncScope.documents([b: false]).writesAny)
        #expect(documents.documents == [a, b])
        #expect(SyncScope.library(writes: false).includes(c) && !SyncScope.library(writes: false).writes(c))
        // The documents are written in ascending order whatever the dictionary's.
        let many = SyncScope.documents(
            Dictionary(uniqueKeysWithValues: (0..<50).map { (Self.document($0), $0 % 2 == 0) }))
        #expect(SyncFrame.scope(many).encoded() == SyncFrame.scope(many).encoded())
        #expect(try SyncFrame(decoding: SyncFrame.scope(many).encoded()) == .scope(many))
    }

    @Test func hostileScopesAreRefused() throws {
        let (a, b) = (Self.document(1), Self.document(2))
        let header: [UInt8] = [SyncFrame.wireVersion, 3]
        func entry(_ document: DocumentID, _ flag: UInt8) -> [UInt8] { document.uuid.bytes + [flag] }
        let refused: [(String, [UInt8])] = [
            ("an unknown form", header + [2]),
            ("a write flag of 2", header + [0, 2]),
            ("a document's flag of 7", header + [1, 1] + entry(a, 7)),
            ("documents out of order", header + [1, 2] + entry(b, 1) + entry(a, 1)),
            ("a document twice", header + [1, 2] + entry(a, 1) + entry(a, 0)),
            ("more documents than the bytes hold", header + [1, 5] + entry(a, 1)),
            ("more documents than a scope names", header + [1, 0x81, 0x40] + entry(a, 1)),
            ("bytes after the scope", header + [0, 1, 9]),
            ("no form", header),
        ]
        for (what, bytes) in refused {
            #expect(throws: CodecError.self, "\(what)") { try SyncFrame(decoding: bytes) }
        }
    }

    @Test(arguments: [1, 2, 3, 7, 38, 101, 2_026, 65_537] as [UInt64])
    func randomScopeBytesDecodeToWhatTheyEncode(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        for _ in 0..<2_000 {
            var bytes: [UInt8] = [SyncFrame.wireVersion, 3, UInt8(generator.next() % 3)]
            let count = Int(generator.next() % 40)
            bytes += (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            guard let frame = try? SyncFrame(decoding: bytes) else { continue }
            #expect(frame.encoded() == bytes, "seed \(seed): \(bytes) decodes to \(frame), which encodes otherwise")
        }
    }
}
