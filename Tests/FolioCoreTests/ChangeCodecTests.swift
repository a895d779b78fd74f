import FolioCore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A change kind with a name for test output.
struct KindSample: Sendable, CustomTestStringConvertible {
    var name: String
    var kind: ChangeKind
    var testDescription: String { name }

    static let undoTarget = ChangeID(device: TestDevices.pool[1], seq: 4)
    static let heads = (0..<4).map { fakeHash("head \($0)") }

    static let all: [KindSample] = {
        var samples = [
            KindSample(name: "edit", kind: .edit(Edit(operations: Data("insert 'x' at 3".utf8)))),
            KindSample(name: "edit without operations", kind: .edit(Edit(operations: Data()))),
            KindSample(
                name: "undo", kind: .edit(Edit(operations: Data([0, 1, 2, 0xFF]), intent: .undo(of: undoTarget)))),
            KindSample(name: "redo", kind: .edit(Edit(operations: Data([9]), intent: .redo(of: undoTarget)))),
            KindSample(
                name: "edit made on a merge", kind: .edit(Edit(operations: Data([7, 7]), isMadeOnMerge: true))),
            KindSample(
                name: "undo made on a merge",
                kind: .edit(Edit(operations: Data([1]), intent: .undo(of: undoTarget), isMadeOnMerge: true))),
            KindSample(name: "large edit", kind: .edit(Edit(operations: Data((0..<5000).map { UInt8($0 % 251) })))),
            KindSample(
                name: "create local",
                kind: .lifecycle(.create(name: "Notes", type: "public.plain-text", container: .local))),
            KindSample(
                name: "create shared, non-ASCII name",
                kind: .lifecycle(.create(name: "Café ☕️ 日本語", type: "com.example.pages", container: .shared))),
            KindSample(
                name: "create with empty strings", kind: .lifecycle(.create(name: "", type: "", container: .local))),
            KindSample(name: "rename", kind: .lifecycle(.rename(to: "Notes (Anna's iPad)"))),
            KindSample(name: "rename to emoji", kind: .lifecycle(.rename(to: "👩‍👩‍👧‍👦"))),
            KindSample(name: "move to shared", kind: .lifecycle(.move(to: .shared))),
            KindSample(name: "move to local", kind: .lifecycle(.move(to: .local))),
            KindSample(name: "delete", kind: .lifecycle(.delete)),
            KindSample(name: "restore", kind: .lifecycle(.restore)),
            KindSample(name: "mark a version", kind: .lifecycle(.markVersion(name: "Sent to editor ✉️"))),
            KindSample(name: "baseline", kind: .baseline(contents: Data("hello, world\n".utf8))),
            KindSample(name: "empty baseline", kind: .baseline(contents: Data())),
        ]
        let strategies: [(String, Resolution.Strategy)] = [
            ("user choice", .userChoice), ("latest wins", .latestWins), ("merge", .merge), ("app merge", .appMerge),
            ("keep both", .keepBoth),
            ("custom", .custom("by-priority")), ("custom, empty name", .custom("")),
            ("custom, non-ASCII", .custom("größte")),
        ]
        for (name, strategy) in strategies {
            samples.append(
                KindSample(
                    name: "resolution, \(name)",
                    kind: .resolution(
                        Resolution(strategy: strategy, chosen: [heads[2]], discarded: [heads[0], heads[3]]))))
            samples.append(
                KindSample(
                    name: "resolution, \(name), with contents",
                    kind: .resolution(
                        Resolution(
                            strategy: strategy, chosen: [heads[1], heads[2]], discarded: [],
                            contents: Data("merged".utf8)))))
        }
        samples.append(
            KindSample(
                name: "resolution with empty contents and no heads",
                kind: .resolution(Resolution(strategy: .merge, chosen: [], discarded: [], contents: Data()))))
        return samples
    }()
}

/// Builds a change with a typical context around `kind`.
func sampleChange(
    _ kind: ChangeKind, document: DocumentID = TestDevices.document, seq: UInt64 = 3, lamport: UInt64 = 7,
    wallTime: Int64 = 1_767_225_600_123, parents: [ChangeHash] = [fakeHash("p1"), fakeHash("p0")]
) -> Change {
    let device = TestDevices.pool[0]
    return Change(
        document: document, id: ChangeID(device: device, seq: seq), parents: parents,
        vector: VersionVector(pairs: [(TestDevices.pool[2], 1), (device, seq), (TestDevices.pool[1], 5)]),
        lamport: lamport, wallTime: Timestamp(millisecondsSince1970: wallTime), kind: kind)
}

@Suite(.workPool) struct ChangeCodecTests {
    /// Decodes `change.encoded()` and checks every field, the hash and the re-encoding.
    private func expectRoundTrip(_ change: Change, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = change.encoded()
        let decoded = try Change(decoding: bytes, document: change.document)
        #expect(decoded == change, sourceLocation: sourceLocation)
        #expect(decoded.hash == change.hash, sourceLocation: sourceLocation)
        // `==` compares hashes only, so compare the fields themselves too.
        #expect(decoded.document == change.document, sourceLocation: sourceLocation)
        #expect(decoded.id == change.id, sourceLocation: sourceLocation)
        #expect(decoded.parents == change.parents, sourceLocation: sourceLocation)
        #expect(decoded.vector == change.vector, sourceLocation: sourceLocation)
        #expect(decoded.lamport == change.lamport, sourceLocation: sourceLocation)
        #expect(decoded.wallTime == change.wallTime, sourceLocation: sourceLocation)
        #expect(decoded.kind == change.kind, sourceLocation: sourceLocation)
        #expect(decoded.encoded() == bytes, "re-encoding is not byte-identical", sourceLocation: sourceLocation)
        let fromData = try Change(decoding: Data(bytes), document: change.document)
        #expect(fromData.hash == change.hash, sourceLocation: sourceLocation)
    }

    @Test(arguments: KindSample.all)
    func everyKindRoundTrips(_ sample: KindSample) throws {
        try expectRoundTrip(sampleChange(sample.kind))
    }

    struct HeaderCase: Sendable, CustomTestStringConvertible {
        var seq: UInt64
        var lamport: UInt64
        var wallTime: Int64
        var testDescription: String { "seq \(seq), lamport \(lamport), wall time \(wallTime)" }
    }

    @Test(arguments: [
        HeaderCase(seq: 1, lamport: 1, wallTime: 0),
        HeaderCase(seq: 1, lamport: 1, wallTime: -1),
        HeaderCase(seq: 127, lamport: 128, wallTime: 63),
        HeaderCase(seq: 128, lamport: 16_384, wallTime: -64),
        HeaderCase(seq: ChangeLimits.counter, lamport: ChangeLimits.counter, wallTime: .max),
        HeaderCase(seq: ChangeLimits.counter - 1, lamport: 1, wallTime: .min),
    ])
    func extremeHeaderValuesRoundTrip(_ header: HeaderCase) throws {
        try expectRoundTrip(
            sampleChange(
                .lifecycle(.delete), seq: header.seq, lamport: header.lamport,
                wallTime: header.wallTime))
        try expectRoundTrip(
            sampleChange(
                .lifecycle(.restore), seq: header.seq, lamport: header.lamport,
                wallTime: header.wallTime, parents: []))
    }

    /// A peer cannot hand a device a counter it could not add one to: beyond ``ChangeLimits/counter`` the decoder
    /// refuses sequence numbers, lamport timestamps and vector entries.
    @Test(arguments: [
        HeaderCase(seq: ChangeLimits.counter + 1, lamport: 1, wallTime: 0),
        HeaderCase(seq: 1, lamport: ChangeLimits.counter + 1, wallTime: 0),
        HeaderCase(seq: .max, lamport: .max, wallTime: 0),
    ])
    func numbersBeyondTheLimitAreRefused(_ header: HeaderCase) throws {
        let bytes = sampleChange(
            .lifecycle(.delete), seq: header.seq, lamport: header.lamport, wallTime: header.wallTime
        ).encoded()
        let error = #expect(throws: CodecError.self) { try Change(decoding: bytes, document: TestDevices.document) }
        #expect(error?.code == .oversized, "\(String(describing: error))")
    }

    @Test func aVectorEntryBeyondTheLimitIsRefused() throws {
        let device = TestDevices.pool[0]
        let change = Change(
            document: TestDevices.document, id: ChangeID(device: device, seq: 1), parents: [fakeHash("p")],
            vector: VersionVector(pairs: [(device, 1), (TestDevices.pool[1], ChangeLimits.counter + 1)]), lamport: 2,
            wallTime: Timestamp(millisecondsSince1970: 0), kind: .lifecycle(.delete))
        let error = #expect(throws: CodecError.self) {
            try Change(decoding: change.encoded(), document: TestDevices.document)
        }
        #expect(error?.code == .oversized, "\(String(describing: error))")
        let vectorError = #expect(throws: CodecError.self) { try VersionVector(decoding: change.vector.encoded()) }
        #expect(vectorError?.code == .oversized)
    }

    @Test func aRootChangeRoundTrips() throws {
        let device = TestDevices.pool[3]
        let root = Change(
            document: TestDevices.document, id: ChangeID(device: device, seq: 1), parents: [],
            vector: VersionVector(pairs: [(device, 1)]), lamport: 1, wallTime: Timestamp(millisecondsSince1970: 0),
            kind: .lifecycle(.create(name: "Untitled", type: "public.plain-text", container: .shared)))
        try expectRoundTrip(root)
    }

    @Test func parentsAreStoredInAscendingOrder() {
        let hashes = [fakeHash("c"), fakeHash("a"), fakeHash("b")]
        let change = sampleChange(.lifecycle(.delete), parents: hashes)
        #expect(change.parents == hashes.sorted())
        #expect(change.hash == sampleChange(.lifecycle(.delete), parents: hashes.reversed()).hash)
    }

    @Test func resolutionListsAreSortedAndDeduplicated() {
        let heads = KindSample.heads
        let resolution = Resolution(
            strategy: .merge, chosen: [heads[3], heads[1], heads[3]],
            discarded: [heads[2], heads[0], heads[2]])
        #expect(resolution.chosen == [heads[3], heads[1]].sorted())
        #expect(resolution.discarded == [heads[2], heads[0]].sorted())
        #expect(
            resolution == Resolution(strategy: .merge, chosen: [heads[1], heads[3]], discarded: [heads[0], heads[2]]))
    }

    @Test func theHashIsTheSHA256OfTheDocumentAndTheEncoding() {
        for sample in KindSample.all {
            let change = sampleChange(sample.kind)
            #expect(change.hash == ChangeHash(hashing: change.document.uuid.bytes + change.encoded()), "\(sample.name)")
        }
    }

    @Test func theHashDependsOnTheDocument() throws {
        let kind = ChangeKind.edit(Edit(operations: Data("same body".utf8)))
        let mine = sampleChange(kind, document: TestDevices.document)
        let theirs = sampleChange(kind, document: TestDevices.otherDocument)
        #expect(mine.encoded() == theirs.encoded(), "the body does not carry the document")
        #expect(mine.hash != theirs.hash)
        #expect(mine != theirs)
        let reread = try Change(decoding: mine.encoded(), document: TestDevices.otherDocument)
        #expect(reread.hash == theirs.hash)
        #expect(reread.hash != mine.hash)
        #expect(reread.document == TestDevices.otherDocument)
    }

    @Test func theHashCoversEveryField() {
        let device = TestDevices.pool[0]
        let base = sampleChange(.edit(Edit(operations: Data("a".utf8))))
        let variants = [
            base,
            sampleChange(.edit(Edit(operations: Data("b".utf8)))),
            sampleChange(.edit(Edit(operations: Data("a".utf8), intent: .undo(of: KindSample.undoTarget)))),
            sampleChange(.edit(Edit(operations: Data("a".utf8), intent: .redo(of: KindSample.undoTarget)))),
            sampleChange(.baseline(contents: Data("a".utf8))),
            sampleChange(.edit(Edit(operations: Data("a".utf8))), seq: 4),
            sampleChange(.edit(Edit(operations: Data("a".utf8))), lamport: 8),
            sampleChange(.edit(Edit(operations: Data("a".utf8))), wallTime: 1_767_225_600_124),
            sampleChange(.edit(Edit(operations: Data("a".utf8))), parents: [fakeHash("p0")]),
            sampleChange(.edit(Edit(operations: Data("a".utf8))), parents: []),
            Change(
                document: base.document, id: base.id, parents: base.parents,
                vector: base.vector.merging(VersionVector(pairs: [(TestDevices.pool[4], 1)])), lamport: base.lamport,
                wallTime: base.wallTime, kind: base.kind),
            Change(
                document: base.document, id: ChangeID(device: TestDevices.pool[1], seq: 5), parents: base.parents,
                vector: base.vector, lamport: base.lamport, wallTime: base.wallTime, kind: base.kind),
            Change(
                document: base.document, id: ChangeID(device: device, seq: 3), parents: base.parents,
                vector: VersionVector(pairs: [(device, 3)]), lamport: base.lamport, wallTime: base.wallTime,
                kind: base.kind),
        ]
        #expect(Set(variants.map(\.hash)).count == variants.count)
        #expect(Set(KindSample.all.map { sampleChange($0.kind).hash }).count == KindSample.all.count)
    }

    @Test func encodingIsDeterministic() {
        for sample in KindSample.all {
            #expect(sampleChange(sample.kind).encoded() == sampleChange(sample.kind).encoded(), "\(sample.name)")
        }
    }

    @Test func aOneCharacterEditByALoneDeviceIsSmall() throws {
        let device = TestDevices.pool[0]
        let first = Change(
            document: TestDevices.document, id: ChangeID(device: device, seq: 1), parents: [],
            vector: VersionVector(pairs: [(device, 1)]), lamport: 1,
            wallTime: Timestamp(millisecondsSince1970: 1_767_225_600_000), kind: .lifecycle(.delete))
        let payload = Data("x".utf8)
        let edit = Change(
            document: TestDevices.document, id: ChangeID(device: device, seq: 2), parents: [first.hash],
            vector: VersionVector(pairs: [(device, 2)]), lamport: 2,
            wallTime: Timestamp(millisecondsSince1970: 1_767_225_601_000), kind: .edit(Edit(operations: payload)))
        let size = edit.encoded().count
        print(
            "a one-character edit by a lone device with one parent encodes to \(size) bytes (payload \(payload.count))")
        #expect(size < 80 + payload.count, "a one-character edit takes \(size) bytes")
        try expectRoundTrip(edit)
    }

    @Test(arguments: [
        KindSample.all[0], KindSample.all[2], KindSample.all[6], KindSample.all[9],
        KindSample.all.first { $0.name == "resolution, custom, with contents" }!,
        KindSample.all.first { $0.name == "resolution, latest wins" }!,
    ])
    func everyTruncationIsRejected(_ sample: KindSample) {
        let bytes = sampleChange(sample.kind).encoded()
        var rejected = 0
        for length in 0..<bytes.count {
            do {
                let change = try Change(decoding: Array(bytes.prefix(length)), document: TestDevices.document)
                Issue.record("a prefix of \(length) of \(bytes.count) bytes decoded as \(change.id)")
            } catch let error as CodecError {
                rejected += 1
                #expect(error.code == .truncated, "prefix \(length) of \(bytes.count): \(error)")
                #expect(error.offset <= length, "prefix \(length): error offset \(error.offset) is past the input")
            } catch {
                Issue.record("threw \(error), not CodecError")
            }
        }
        #expect(rejected == bytes.count)
    }

    @Test func emptyInputIsTruncated() {
        #expect(throws: CodecError(.truncated, "the input ends inside the format version", at: 0)) {
            try Change(decoding: [UInt8](), document: TestDevices.document)
        }
    }

    /// Random byte flips, insertions and deletions: decoding either throws a `CodecError` or yields a change that
    /// is canonical (re-encodes to the same bytes, with the hash of those bytes).
    @Test func mutatedEncodingsNeverCrashAndDecodeOnlyWhenCanonical() {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        let originals = KindSample.all.map { sampleChange($0.kind).encoded() }
        var decodedCount = 0
        for iteration in 0..<3000 {
            check.iteration = iteration
            var bytes = originals[generator.int(in: 0...(originals.count - 1))]
            for _ in 0..<generator.int(in: 1...3) {
                let position = generator.int(in: 0...(bytes.count - 1))
                switch generator.int(in: 0...3) {
                case 0: bytes[position] ^= UInt8(1 << generator.int(in: 0...7))
                case 1: bytes[position] = UInt8(truncatingIfNeeded: generator.next())
                case 2: bytes.insert(UInt8(truncatingIfNeeded: generator.next()), at: position)
                default: bytes.remove(at: position)
                }
            }
            do {
                let change = try Change(decoding: bytes, document: TestDevices.document)
                decodedCount += 1
                check.expect(change.encoded() == bytes, "a mutation decoded but re-encodes differently: \(bytes)")
                check.expect(
                    change.hash == ChangeHash(hashing: TestDevices.document.uuid.bytes + bytes),
                    "a mutation decoded with a hash that is not of its bytes")
                check.expect(change.vector[change.id.device] == change.id.seq, "decoded \(change.id) not in its vector")
            } catch let error as CodecError {
                check.expect(error.offset >= 0 && error.offset <= bytes.count, "offset \(error.offset) out of range")
                check.expect(
                    !error.message.isEmpty && error.description.contains("at byte \(error.offset)"),
                    "error without a message: \(error)")
            } catch {
                Issue.record("threw \(error), not CodecError")
            }
            if check.shouldStop { break }
        }
        print("seed \(seed): \(decodedCount) of 3000 mutated encodings still decoded (canonically)")
    }
}
