import FolioCore
import FolioModels
import FolioSimulator
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@testable import FolioSync

/// Every change the repository's inputs hold comes back from the compact run encoding exactly, canonical bytes and
/// hash: the changes decoded from every fuzz target's committed inputs (`Tools/fuzz/corpus/`, `Tools/fuzz/crashes/`)
/// and those every scenario of `Scenarios/` leaves in its devices' stores. Each history is encoded whole and cut into
/// runs (of fixed lengths and at seeded places) that name the runs before them and the changes outside them, the
/// reader looking up what a run names, or the run carrying it.
@Suite(.workPool) struct ChangeRunCorpusTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    // MARK: Fuzz corpora

    /// The fuzz targets whose inputs give changes (`CorpusDecoder` reads each as its harness does).
    static let targets = [
        "change-codec", "change-run", "sync-message", "folder-batch", "remote-names", "text-operations",
        "records-operations", "pages-operations", "document-contents",
    ]
    /// The fuzz targets whose inputs give no change: package manifests and paths, the merge graph's own events, a
    /// segment's seqs, and store-ingest's scripts, whose forged changes are made from the state of the stores the
    /// script runs against.
    static let targetsWithoutChanges: Set = ["package-manifest", "text-event-graph", "store-ingest", "segment-seqs"]

    @Test func everyFuzzTargetIsRoundTrippedOrHoldsNoChanges() throws {
        let harnesses = try FileManager.default.contentsOfDirectory(
            atPath: Self.repository.appendingPathComponent("Tools/fuzz/Harnesses").path)
        let names = Set(harnesses.filter { $0.hasSuffix(".swift") }.map { String($0.dropLast(".swift".count)) })
        #expect(names.count >= 12)
        #expect(names == Set(Self.targets).union(Self.targetsWithoutChanges))
    }

    @Test(arguments: targets)
    func everyChangeOfAFuzzCorpusRoundTripsThroughRuns(_ target: String) throws {
        let seeds = try Self.inputs(in: "Tools/fuzz/corpus/\(target)")
        let reproducers = try Self.inputs(in: "Tools/fuzz/crashes/\(target)")
        try #require(!seeds.isEmpty, "\(target) has no committed seeds")
        var decoder = CorpusDecoder(target: target)
        for input in seeds { decoder.decode(input) }
        // Every committed seed decodes as its harness decodes it.
        #expect(decoder.undecodable.isEmpty, "\(target): seeds that do not decode: \(decoder.undecodable)")
        for input in reproducers { decoder.decode(input) }
        let decoded = decoder.histories.reduce(0) { $0 + $1.changes.count }
        #expect(decoded > 0 && decoded >= seeds.count - decoder.withoutChanges, "\(target): \(decoded) changes")

        // What a run may name outside itself: every change decoded here, the log the harness decodes against (the
        // sample history's first ten changes) and the changes decoding looked up in it.
        var known = decoder.lookedUp
        for change in SampleChanges.held.values { known[change.hash] = ChangeStamp(change) }
        for history in decoder.histories {
            for change in history.changes where known[change.hash] == nil { known[change.hash] = ChangeStamp(change) }
        }
        var tally = RoundTrip.Tally()
        for history in decoder.histories {
            try RoundTrip.check(history.changes, known: known, "\(target) \(history.label)", into: &tally)
        }
        let inputs = seeds.count + reproducers.count
        print(
            "\(target): \(inputs - decoder.undecodable.count) of \(inputs) inputs decode, \(decoder.withoutChanges) to no change; \(tally)"
        )
        #expect(tally.changes == decoded - tally.leftOut && tally.changes >= seeds.count - decoder.withoutChanges)
        #expect(tally.leftOut == 0, "\(target): \(tally.leftOut) changes name changes no input holds")
    }

    /// The harnesses' sample history, rebuilt by `SampleChanges` here, is the one change-codec's seeds hold (beside
    /// the seeds of changes that list blobs, made after it by `Tools/fuzz/Support/SampleBlobs.swift`).
    @Test func theSampleHistoryIsTheHarnesses() throws {
        let document = FuzzIDs.document(7)
        let seeds = try Self.inputs(in: "Tools/fuzz/corpus/change-codec")
        let changes = seeds.compactMap { try? Change(decoding: $0.bytes, document: document) }
        #expect(changes.contains { !$0.blobs.isEmpty })
        let decoded = Set(changes.filter(\.blobs.isEmpty).map(\.hash))
        #expect(decoded == Set(SampleChanges.history(of: document).map(\.hash)))
    }

    /// The committed inputs under `path` (a file each; a README is none), by name.
    static func inputs(in path: String) throws -> [CorpusDecoder.Input] {
        let directory = repository.appendingPathComponent(path)
        guard FileManager.default.fileExists(atPath: directory.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            .filter { !$0.hasPrefix(".") && $0 != "README.md" }
            .map {
                CorpusDecoder.Input(
                    name: "\(path)/\($0)", bytes: [UInt8](try Data(contentsOf: directory.appendingPathComponent($0))))
            }
    }

    // MARK: Scenarios

    static let scenarios: [String] =
        (try? FileManager.default.contentsOfDirectory(atPath: repository.appendingPathComponent("Scenarios").path))?
        .filter { $0.hasSuffix(".yaml") }.sorted() ?? []

    @Test func thereAreScenarios() {
        #expect(Self.scenarios.count >= 15)
    }

    /// Every document's log in every device's store once the scenario has run: the changes as the devices made,
    /// synced, merged and resolved them.
    @Test(arguments: scenarios)
    func everyChangeAScenarioLeavesRoundTripsThroughRuns(_ file: String) async throws {
        let data = try Data(contentsOf: Self.repository.appendingPathComponent("Scenarios/\(file)"))
        let scenario = try ScenarioParser.parse(data: data, file: "Scenarios/\(file)")
        let work = try TemporaryDirectory()
        let result = await Simulator(workDirectory: work.url, keepsFiles: true, makesReport: false).run(scenario)
        try #require(result.passed, "\(file): \(result.failures.map(\.description).joined(separator: "; "))")
        try #require(!result.deviceDirectories.isEmpty)
        var tally = RoundTrip.Tally()
        for (device, root) in result.deviceDirectories.sorted(by: { $0.key < $1.key }) {
            let url = root.appendingPathComponent(".folio/store.sqlite")
            let owner = try #require(try DeviceRegistry.localIdentity(ofStoreAt: url))
            let store = try ChangeLogStore(at: url, key: owner.key, deviceName: owner.name, durability: .off)
            for document in try store.documents() {
                try RoundTrip.check(try store.changes(of: document), known: [:], "\(file) \(device)", into: &tally)
            }
            try store.close()
        }
        print("\(file): \(tally)")
        #expect(tally.changes > 0 && tally.leftOut == 0)
    }
}

// MARK: Round trips

/// Encodes a history as runs, in several ways, and requires every change back exactly.
enum RoundTrip {
    /// What round trips checked.
    struct Tally: CustomStringConvertible {
        /// The changes round-tripped (each in several runs).
        var changes = 0
        /// The runs encoded and decoded.
        var runs = 0
        /// Changes left out: they name a change neither earlier in their history nor known, or repeat an identity.
        var leftOut = 0

        var description: String { "\(changes) changes round-trip in \(runs) runs, \(leftOut) left out" }
    }

    /// The seeds of the cuts made at random places (a failure names its seed).
    static let cutSeeds: [UInt64] = [1, 2, 3, 0x5EED_0038]

    /// Encodes `history` (changes of one document, put in causal order here) whole and in pieces, with `known` for
    /// the changes outside it that it names, decodes every run and requires the very changes back.
    static func check(
        _ history: [Change], known: [ChangeHash: ChangeStamp], _ label: String, into tally: inout Tally
    ) throws {
        let (changes, outside) = placeable(history, known: known)
        tally.leftOut += history.count - changes.count
        guard let document = changes.first?.document else { return }
        let outsideByID = Dictionary(outside.values.map { ($0.id, $0) }) { first, _ in first }

        // Whole: the reader looking up what the run names outside it, then the run carrying it.
        let whole = try ChangeRunCodec.encode(changes, of: document) { outside[$0] }
        try expectSame(
            ChangeRunCodec.decode(whole, document: document) { outsideByID[$0] }, changes, "\(label), whole")
        let carrying = try ChangeRunCodec.encode(changes, of: document, embeddingOutside: true) { outside[$0] }
        try expectSame(
            ChangeRunCodec.decode(carrying, document: document) { _ in nil }, changes,
            "\(label), whole, carrying the stamps of what it names")
        tally.runs += 2

        var cuts: [(name: String, lengths: [Int])] = [1, 2, 3, 7].filter { $0 < changes.count }.map {
            ("runs of \($0)", Array(repeating: $0, count: (changes.count + $0 - 1) / $0))
        }
        for seed in cutSeeds where changes.count > 2 {
            var generator = SplitMix64(seed: seed)
            var lengths: [Int] = []
            while lengths.reduce(0, +) < changes.count {
                lengths.append(Int.random(in: 1...max(1, changes.count / 3), using: &generator))
            }
            cuts.append(("runs cut with seed \(seed)", lengths))
        }
        for cut in cuts {
            var stamps = outside
            var byID = outsideByID
            var start = 0
            for (index, length) in cut.lengths.enumerated() {
                let piece = Array(changes[start..<min(start + length, changes.count)])
                start += piece.count
                // Every other run carries the stamps of what it names and is decoded alone.
                let carries = index % 2 == 1
                let bytes = try ChangeRunCodec.encode(piece, of: document, embeddingOutside: carries) { stamps[$0] }
                let decoded = try ChangeRunCodec.decode(bytes, document: document) { carries ? nil : byID[$0] }
                try expectSame(decoded, piece, "\(label), \(cut.name), run \(index)")
                for change in piece {
                    stamps[change.hash] = ChangeStamp(change)
                    byID[change.id] = ChangeStamp(change)
                }
                tally.runs += 1
            }
        }
        tally.changes += changes.count
    }

    /// Requires `decoded` to be `changes`: the same canonical bytes, hashes and fields, in order.
    static func expectSame(_ decoded: [Change], _ changes: [Change], _ label: String) throws {
        try #require(decoded.count == changes.count, "\(label): \(decoded.count) changes for \(changes.count)")
        for (back, change) in zip(decoded, changes) {
            try #require(back.encoded() == change.encoded(), "\(label): \(change.id)'s canonical bytes differ")
            try #require(back.hash == change.hash, "\(label): \(change.id)'s hash differs")
            try #require(back == change, "\(label): \(change.id) differs")
        }
    }

    /// The changes of `history` that a run can hold, each after its parents (otherwise in the order given), and the
    /// stamps of the changes outside them that they name. A change is left out, with the changes made on it, when a
    /// parent is neither earlier in the history nor in `known`, or when it repeats an identity; a run cannot tell
    /// apart outside changes that share an identity with each other or with one of the history, so those are not
    /// known to it.
    static func placeable(_ history: [Change], known: [ChangeHash: ChangeStamp]) -> (
        changes: [Change], outside: [ChangeHash: ChangeStamp]
    ) {
        var unique: [Change] = []
        var inHistory = Set<ChangeHash>()
        for change in history where inHistory.insert(change.hash).inserted { unique.append(change) }
        let identities = Set(unique.map(\.id))
        let named = Set(unique.flatMap { $0.parents + resolutionHeads(of: $0) }).subtracting(inHistory)
        let candidates = named.compactMap { known[$0] }.filter { !identities.contains($0.id) }
        let shared = Dictionary(grouping: candidates, by: \.id).filter { $0.value.count > 1 }.keys
        let usable = Dictionary(candidates.filter { !shared.contains($0.id) }.map { ($0.hash, $0) }) { a, _ in a }

        var placed: [Change] = []
        var placedHashes = Set<ChangeHash>()
        var placedIDs = Set<ChangeID>()
        var waiting = unique
        var progress = true
        while progress {
            progress = false
            var next: [Change] = []
            for change in waiting {
                let ready = change.parents.allSatisfy { placedHashes.contains($0) || usable[$0] != nil }
                guard ready, !placedIDs.contains(change.id) else {
                    next.append(change)
                    continue
                }
                placed.append(change)
                placedHashes.insert(change.hash)
                placedIDs.insert(change.id)
                progress = true
            }
            waiting = next
        }
        let outside = usable.filter { hash, _ in
            placed.contains { $0.parents.contains(hash) || resolutionHeads(of: $0).contains(hash) }
        }
        return (placed, outside)
    }

    static func resolutionHeads(of change: Change) -> [ChangeHash] {
        guard case .resolution(let resolution) = change.kind else { return [] }
        return resolution.chosen + resolution.discarded
    }
}

// MARK: Decoding the fuzz inputs

/// Decodes fuzz inputs into histories of changes, each input as its target's harness
/// (`Tools/fuzz/Harnesses/TARGET.swift`) reads it.
struct CorpusDecoder {
    struct Input {
        var name: String
        var bytes: [UInt8]
    }

    struct History {
        var label: String
        var changes: [Change]
    }

    let target: String
    /// What the inputs decoded to: one history per input, or, for inputs of one change or one payload each, one
    /// history of them all.
    private(set) var histories: [History] = []
    /// The inputs that do not decode.
    private(set) var undecodable: [String] = []
    /// The inputs that decode to no change (a hello, a request).
    private(set) var withoutChanges = 0
    /// The changes decoding looked up in the log it decoded against, by hash.
    private(set) var lookedUp: [ChangeHash: ChangeStamp] = [:]
    /// The changes of the runs decoded so far, the latest run's over the others': a run cut from a longer history
    /// names the runs cut before it, which come before it in the corpus.
    private var earlierRuns: [ChangeID: Change] = [:]
    /// The chain that inputs of one payload each become: their changes, one device after the other.
    private var chain: Chain

    init(target: String) {
        self.target = target
        chain = Chain(document: FuzzIDs.document(100))
    }

    mutating func decode(_ input: Input) {
        let decoded: [Change]?
        switch target {
        case "change-codec": decoded = decodeChange(input.bytes)
        case "change-run": decoded = decodeRun(input.bytes)
        case "sync-message": decoded = decodeMessage(input.bytes)
        case "folder-batch": decoded = decodeBatch(input.bytes)
        case "remote-names": decoded = RemoteNames.changes(from: input.bytes)
        case "text-operations": decoded = decodeGroup(input.bytes, as: TextDocument.Operation.self)
        case "records-operations": decoded = decodeGroup(input.bytes, as: RecordsDocument.Operation.self)
        case "pages-operations": decoded = decodeGroup(input.bytes, as: PagesDocument.Operation.self)
        case "document-contents": decoded = decodeContents(input.bytes)
        default: decoded = nil
        }
        guard let decoded else {
            undecodable.append(input.name)
            return
        }
        if decoded.isEmpty {
            withoutChanges += 1
        } else if ["change-codec", "text-operations", "records-operations", "pages-operations", "document-contents"]
            .contains(target)
        {
            if histories.isEmpty { histories.append(History(label: "all inputs", changes: [])) }
            histories[0].changes += decoded
        } else {
            histories.append(History(label: input.name, changes: decoded))
        }
    }

    /// change-codec: one change of document 7.
    private func decodeChange(_ bytes: [UInt8]) -> [Change]? {
        (try? Change(decoding: bytes, document: FuzzIDs.document(7))).map { [$0] }
    }

    /// change-run: a run in a message of format 3, decoded against a log of the sample history's first ten changes;
    /// a run cut in order from a longer history (the trace's) against the runs before it as well.
    private mutating func decodeRun(_ bytes: [UInt8]) -> [Change]? {
        var writer = BinaryWriter(capacity: bytes.count + 24)
        writer.write(byte: SyncMessage.runFormatVersion)
        writer.write(byte: 4)
        writer.write(fixed: SampleChanges.document.uuid.high)
        writer.write(fixed: SampleChanges.document.uuid.low)
        writer.write(lengthPrefixed: bytes)
        writer.write(varint: 0)
        guard case .run(let run)? = try? SyncMessage(decoding: writer.bytes) else { return nil }
        let held = SampleChanges.held
        var decoded = decodeRun(run, devices: held.values.flatMap(\.vector.devices)) { held[$0] }
        if decoded == nil {
            let earlier = earlierRuns
            decoded = decodeRun(run, devices: (Array(held.values) + earlier.values).flatMap(\.vector.devices)) {
                earlier[$0] ?? held[$0]
            }
        }
        for change in decoded ?? [] { earlierRuns[change.id] = change }
        return decoded
    }

    /// sync-message: a message; a list of changes holds its changes, a run the changes it decodes to against the
    /// log of the sample history's first ten changes, and any other message none.
    private mutating func decodeMessage(_ bytes: [UInt8]) -> [Change]? {
        guard let message = try? SyncMessage(decoding: bytes) else { return nil }
        switch message {
        case .changes(_, let changes, _): return changes.map(\.change)
        case .run(let run):
            let held = SampleChanges.held
            return decodeRun(run, devices: held.values.flatMap(\.vector.devices)) { held[$0] }
        case .hello, .request, .done, .wantBlobs, .blobs: return []
        }
    }

    /// The changes of `run` as `ChangeRunMessage` decodes them against a log holding `devices` and `lookUp`'s
    /// changes; `nil` if it does not decode.
    private mutating func decodeRun(
        _ run: ChangeRunMessage, devices: [DeviceID], lookUp: (ChangeID) -> Change?
    ) -> [Change]? {
        let context = ChangeRunMessage.Context(logDevices: Set(devices), waiting: [], earlier: [:])
        var named: [Change] = []
        let decoded = try? run.decodedChanges(in: context) { id in
            let change = lookUp(id)
            if let change { named.append(change) }
            return change
        }
        guard let decoded else { return nil }
        for change in named { lookedUp[change.hash] = ChangeStamp(change) }
        return decoded.map(\.change)
    }

    /// folder-batch: a batch file without its signature and checksum, which the harness appends, signing as the
    /// third device.
    private func decodeBatch(_ body: [UInt8]) -> [Change]? {
        let attacker = FuzzIDs.key(13)
        let signed = body + attacker.publicKey.bytes + attacker.signature(for: FolderBatch.signedBytes(ofBody: body))
        let file = signed + ChangeHash(hashing: signed).bytes
        return (try? FolderBatch(decoding: file)).map { $0.changes.map(\.change) }
    }

    /// text-, records- and pages-operations: a group of the model's operations, the payload of an edit.
    private mutating func decodeGroup<Operation: DocumentOperation>(_ bytes: [UInt8], as _: Operation.Type)
        -> [Change]?
    {
        guard (try? Operation.decodeGroup(Data(bytes))) != nil else { return nil }
        let start = chain.changes.count
        chain.add(.edit(Edit(operations: Data(bytes))))
        return Array(chain.changes[start...])
    }

    /// document-contents: contents, as a baseline and as a resolution carry them.
    private mutating func decodeContents(_ bytes: [UInt8]) -> [Change]? {
        guard (try? DocumentContents(decoding: Data(bytes))) != nil else { return nil }
        let start = chain.changes.count
        let baseline = chain.add(.baseline(contents: Data(bytes)))
        chain.add(
            .resolution(
                Resolution(strategy: .custom("corpus"), chosen: [baseline.hash], discarded: [], contents: Data(bytes))))
        return Array(chain.changes[start...])
    }
}

/// A chain of changes of one document, each made on the one before by the sample devices in turn, the first a
/// creation.
struct Chain {
    let document: DocumentID
    private(set) var changes: [Change] = []
    private var vector = VersionVector()

    init(document: DocumentID) {
        self.document = document
    }

    /// Adds a change of `kind` on the latest one, by `device` (by default the sample devices in turn), making the
    /// creation first if there is none.
    @discardableResult
    mutating func add(_ kind: ChangeKind, by device: DeviceID? = nil) -> Change {
        if changes.isEmpty, device == nil {
            add(
                .lifecycle(.create(name: "Corpus", type: "com.folio.text", container: .shared)), by: SampleChanges.first
            )
        }
        let author = device ?? (changes.count % 2 == 0 ? SampleChanges.first : SampleChanges.second)
        let id = ChangeID(device: author, seq: vector[author] + 1)
        var context = vector
        context.include(id)
        let lamport = UInt64(changes.count + 1)
        let change = Change(
            document: document, id: id, parents: changes.last.map { [$0.hash] } ?? [], vector: context,
            lamport: lamport, wallTime: FuzzIDs.epoch.advanced(by: Int64(lamport) * 1000), kind: kind)
        vector.merge(change.vector)
        changes.append(change)
        return change
    }
}

// MARK: What the harnesses share (Tools/fuzz/Support)

/// The fixed identities of `Tools/fuzz/Support/FuzzInput.swift`.
enum FuzzIDs {
    static func key(_ number: UInt64) -> DeviceKey {
        DeviceKey(using: SeededIdentifierSource(seed: 0xD0D0_0000_0000_0000 | number))
    }
    static func device(_ number: UInt64) -> DeviceID { key(number).id }
    static func document(_ number: UInt64) -> DocumentID {
        DocumentID(UUIDBytes(high: 0xDC00_0000_0000_0000 | number, low: number))
    }
    static let epoch = Timestamp(millisecondsSince1970: 1_750_000_000_000)
}

/// The sample history of `Tools/fuzz/Support/SampleChanges.swift`, which the harnesses' seeds and logs are made of.
enum SampleChanges {
    static let document = FuzzIDs.document(1)
    static let first = FuzzIDs.device(1)
    static let second = FuzzIDs.device(2)

    /// The log the change-run and sync-message harnesses decode runs against: the history's first ten changes.
    static let held = Dictionary(uniqueKeysWithValues: history().prefix(10).map { ($0.id, $0) })

    static func history(of document: DocumentID = document) -> [Change] {
        var chain = Chain(document: document)
        func add(_ device: DeviceID, _ kind: ChangeKind) { chain.add(kind, by: device) }
        add(first, .lifecycle(.create(name: "Notes", type: "com.folio.text", container: .local)))
        add(first, .edit(Edit(operations: Data([1, 0, 5, 72, 101, 108, 108, 111]))))
        add(second, .edit(Edit(operations: Data([1, 2, 1, 33]))))
        add(first, .edit(Edit(operations: Data([1, 1, 0, 1]), intent: .undo(of: chain.changes[1].id))))
        add(second, .lifecycle(.rename(to: "Ideas é")))
        add(first, .lifecycle(.move(to: .shared)))
        add(second, .baseline(contents: DocumentContents.data(Data("baseline\n".utf8)).encoded()))
        add(first, .lifecycle(.delete))
        add(second, .lifecycle(.restore))
        let a = chain.changes[chain.changes.count - 1]
        add(first, .edit(Edit(operations: Data([1, 2, 2, 104, 105]), intent: .redo(of: chain.changes[3].id))))
        add(
            second,
            .resolution(Resolution(strategy: .latestWins, chosen: [a.hash], discarded: [chain.changes[2].hash])))
        add(
            first,
            .resolution(
                Resolution(
                    strategy: .custom("pick"), chosen: [chain.changes[4].hash], discarded: [],
                    contents: DocumentContents.data(Data("merged".utf8)).encoded())))
        add(second, .resolution(Resolution(strategy: .merge, chosen: [], discarded: [])))
        add(first, .resolution(Resolution(strategy: .keepBoth, chosen: [], discarded: [])))
        add(second, .resolution(Resolution(strategy: .userChoice, chosen: [], discarded: [])))
        return chain.changes
    }
}

/// remote-names: the changes a peer sends about a document, read from the input as `FuzzInput` reads choices (a
/// byte each, two for a number above 256, a string as its length and bytes; an exhausted input reads as zeros): a
/// creation with a name, a type and a container, then maybe a rename, then maybe a move.
enum RemoteNames {
    static func changes(from bytes: [UInt8]) -> [Change] {
        var input = Choices(bytes)
        let remote = FuzzIDs.device(21)
        // The harness's first execution's document.
        let document = FuzzIDs.document(1_001)
        var changes: [Change] = []
        func add(_ kind: ChangeKind) {
            let lamport = UInt64(changes.count + 1)
            changes.append(
                Change(
                    document: document, id: ChangeID(device: remote, seq: lamport),
                    parents: changes.last.map { [$0.hash] } ?? [], vector: VersionVector([(remote, lamport)]),
                    lamport: lamport, wallTime: FuzzIDs.epoch.advanced(by: Int64(lamport)), kind: kind))
        }
        let type = input.pick(["com.folio.text", "com.folio.records", "com.folio.pages", "x", ""])
        let customType = input.bool()
        let name = input.string(upTo: 300)
        let chosenType = customType ? input.string(upTo: 40) : type
        add(.lifecycle(.create(name: name, type: chosenType, container: input.bool() ? .shared : .local)))
        if input.bool() { add(.lifecycle(.rename(to: input.string(upTo: 300)))) }
        if input.bool() { add(.lifecycle(.move(to: input.bool() ? .shared : .local))) }
        return changes
    }

    struct Choices {
        let data: [UInt8]
        var offset = 0

        init(_ data: [UInt8]) { self.data = data }

        mutating func byte() -> UInt8 {
            guard offset < data.count else { return 0 }
            defer { offset += 1 }
            return data[offset]
        }

        mutating func bool() -> Bool { byte() & 1 == 1 }

        mutating func int(below bound: Int) -> Int {
            if bound <= 256 { return Int(byte()) % bound }
            return (Int(byte()) << 8 | Int(byte())) % bound
        }

        mutating func string(upTo limit: Int) -> String {
            let count = min(int(below: limit + 1), data.count - min(offset, data.count))
            defer { offset += count }
            return String(decoding: data[offset..<offset + count], as: UTF8.self)
        }

        mutating func pick<T>(_ choices: [T]) -> T { choices[int(below: choices.count)] }
    }
}
