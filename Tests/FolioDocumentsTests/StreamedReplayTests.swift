import FolioConflicts
import FolioCore
import FolioModels
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@testable import FolioDocuments
@testable import FolioStore

/// A replay that streams the log forward (what the open of a document does) gives exactly what the replay along
/// primary parents that reads the whole tail gives: the same model, the same skipped operations, the same refused
/// contents, in the same order. It streams to the head while the history is one line (edits, undos and redos,
/// baselines and resolutions the model accepts or refuses, operations that do not decode or apply, lifecycle changes,
/// checkpoints on the way); where the history stops being one line it falls back, from the tip it reached when the
/// head's line passes through it, or to the replay that reads the whole tail.
@Suite(.workPool) struct StreamedReplayTests {
    typealias Replay = DocumentReplay<TextDocument>

    /// A store with one text document, whose history the tests write straight into the log.
    final class History {
        let directory: TemporaryDirectory
        let store: ChangeLogStore
        let id = DocumentID(UUIDBytes("5e7ea3ed-0000-4000-8000-000000000001")!)
        let phone = Device.named("Phone")
        /// Every change appended, in the order appended.
        private(set) var log: [Change] = []

        init(access: StoreAccess = .shared) throws {
            directory = try TemporaryDirectory()
            store = try ChangeLogStore(
                at: directory.url.appendingPathComponent("store.sqlite"), key: .named("Mac"), deviceName: "Mac",
                clock: ManualClock(start: Timestamp(millisecondsSince1970: 1_767_225_600_000)), access: access)
        }

        deinit { try? store.close() }

        /// The latest change appended.
        var latest: Change? { log.last }

        /// Appends `kind` on `parents` (the latest change when `nil`; the author's own latest change joins them).
        @discardableResult
        func append(_ kind: ChangeKind, on parents: [Change]? = nil, by author: Device? = nil) throws -> Change {
            let choice: ParentChoice =
                if let parents { .heads(parents.map(\.hash)) } else { latest.map { .heads([$0.hash]) } ?? .allHeads }
            let change = try store.append([kind], to: id, on: choice, author: author)[0]
            log.append(change)
            return change
        }

        /// Appends `count` edits typing or erasing one character, one after the other.
        func type(_ count: Int) throws {
            var kinds: [ChangeKind] = []
            for index in 0..<count {
                let operation: TextDocument.Operation =
                    index % 3 == 2 ? .delete(at: 0, count: 1) : .insert(at: index % 5, text: "x")
                kinds.append(edit([operation]))
            }
            let parents: ParentChoice = latest.map { .heads([$0.hash]) } ?? .allHeads
            log += try store.append(kinds, to: id, on: parents)
        }

        /// Folds the rows but the newest `keeping` into a segment of their own, as a fold while the store is in use.
        func fold(keeping: Int) throws {
            _ = try store.fold(id, keepingNewest: keeping, minimum: 1, merging: false)
        }

        /// Saves a checkpoint at `change` holding `text`.
        func checkpoint(at change: Change, text: String) throws {
            try store.checkpoints.save(
                of: id, at: change.vector, contents: TextDocument(text: text).contents().encoded())
        }

        /// The state at `head` by the replay that reads the whole tail, and by the streamed one.
        func replays(at head: Change, streaming: Replay.Streaming = .init(minimum: 0)) -> (
            whole: Result<Replay.Outcome, DocumentError>, streamed: Result<Replay.Outcome, DocumentError>
        ) {
            var streamed = Replay(store: store, document: id)
            streamed.streaming = streaming
            // The streamed replay with the cache emptied: the other leaves the segments it read there.
            try? store.forgetDecodedSegments(of: id)
            let streamedOutcome = Result { () throws(DocumentError) in try streamed.state(at: head) }
            let whole = Replay(store: store, document: id)
            return (Result { () throws(DocumentError) in try whole.state(at: head) }, streamedOutcome)
        }
    }

    static func edit(_ operations: [TextDocument.Operation], intent: Edit.Intent = .edit) -> ChangeKind {
        .edit(Edit(operations: TextDocument.Operation.encodeGroup(operations), intent: intent))
    }

    static func contents(_ text: String) -> Data { TextDocument(text: text).contents().encoded() }

    /// Contents a text refuses (see `ForgedChangeTests`).
    static let refused: [Data] = [
        Data([0xDE, 0xAD, 0xBE, 0xEF]), DocumentContents.data(Data([0xFF, 0xFE])).encoded(), Data(),
    ]

    /// Whether both replays gave the same outcome (or failed alike); what differs otherwise.
    static func difference(
        _ whole: Result<Replay.Outcome, DocumentError>, _ streamed: Result<Replay.Outcome, DocumentError>
    ) -> String? {
        switch (whole, streamed) {
        case (.success(let whole), .success(let streamed)):
            if whole.model != streamed.model {
                return "text \(whole.model.text.debugDescription) became \(streamed.model.text.debugDescription)"
            }
            if whole.skippedOperations != streamed.skippedOperations {
                return "skipped \(whole.skippedOperations) became \(streamed.skippedOperations)"
            }
            if whole.refusedContents != streamed.refusedContents {
                return "refused \(whole.refusedContents) became \(streamed.refusedContents)"
            }
            return nil
        case (.failure(let whole), .failure(let streamed)):
            return whole.code == streamed.code ? nil : "error \(whole) became \(streamed)"
        default:
            return "\(whole) became \(streamed)"
        }
    }

    // MARK: One line of history

    /// A long line of typing, folded into several segments with rows after them, streams forward to its head, a
    /// segment or a batch at a time, from the first change and from a checkpoint in the middle, whether the segments
    /// are read through the cache or decoded one at a time.
    @Test(arguments: [0, Int.max])
    func aLongLineStreamsToItsHead(cachedSegments: Int) throws {
        let history = try History()
        try history.append(
            .lifecycle(.create(name: "Notes", type: TextDocument.documentType.identifier, container: .local)))
        for _ in 0..<5 {
            try history.type(1_000)
            try history.fold(keeping: 10)
        }
        try history.type(300)
        let head = try #require(history.latest)
        let streaming = Replay.Streaming(minimum: 4_096, cachedSegments: cachedSegments)
        let (whole, streamed) = history.replays(at: head, streaming: streaming)
        #expect(Self.difference(whole, streamed) == nil)
        let outcome = try streamed.get()
        guard case .streamed(let batches) = outcome.reading else {
            Issue.record("the replay read \(outcome.reading)")
            return
        }
        #expect(batches >= 6)
        #expect(try whole.get().reading == .whole)

        // From a checkpoint in the middle (its text a marker, to see that the replay starts there).
        try history.checkpoint(at: history.log[400], text: "MARK")
        let (fromWhole, fromStreamed) = history.replays(at: head, streaming: streaming)
        #expect(Self.difference(fromWhole, fromStreamed) == nil)
        #expect(try fromStreamed.get().model.text != outcome.model.text)
        guard case .streamed = try fromStreamed.get().reading else {
            Issue.record("the replay from the checkpoint read \(try fromStreamed.get().reading)")
            return
        }
        if cachedSegments == 0 {
            // The checkpoint's change is folded: finding it keeps no segment in the cache either.
            try history.store.forgetDecodedSegments(of: history.id)
            var replay = Replay(store: history.store, document: history.id)
            replay.streaming = streaming
            _ = try replay.state(at: head)
            let row = try history.store.read("finding the document") { db in
                try history.store.rowID(of: history.id, in: db)
            }
            #expect(history.store.segmentCache.cached(try #require(row)) == nil)
        }

        // Fewer changes than the minimum after the checkpoint: read at once.
        try history.checkpoint(at: history.log[history.log.count - 100], text: "LATE")
        let (_, late) = history.replays(at: head, streaming: streaming)
        #expect(try late.get().reading == .whole)
    }

    /// Undos and redos, baselines and resolutions whose contents the model accepts or refuses, operations that do
    /// not decode or do not apply, lifecycle changes: the stream goes through each, and the state at every change
    /// is the replay's.
    @Test func everyKindOfChangeOnOneLine() throws {
        let history = try History()
        try history.append(Self.edit([.insert(at: 0, text: "hello")]))
        try history.append(Self.edit([.insert(at: 99, text: "nowhere")]))  // does not apply
        try history.append(.edit(Edit(operations: Data([0xFF, 0x01, 0x02]))))  // does not decode
        try history.append(.baseline(contents: Self.refused[0]))
        let typed = try history.append(Self.edit([.insert(at: 5, text: " world")]))
        try history.append(Self.edit([.delete(at: 5, count: 6)], intent: .undo(of: typed.id)))
        try history.append(Self.edit([.insert(at: 5, text: " world")], intent: .redo(of: typed.id)))
        try history.append(.lifecycle(.rename(to: "Greeting")))
        try history.append(.baseline(contents: Self.contents("reset\n")))
        try history.append(Self.edit([.delete(at: 40, count: 2)]))  // does not apply
        try history.append(.baseline(contents: Self.refused[1]))
        let latest = try #require(history.latest)
        try history.append(
            .resolution(
                Resolution(strategy: .userChoice, chosen: [latest.hash], discarded: [], contents: Self.refused[2])))
        try history.append(Self.edit([.append("!")]))
        try history.append(
            .resolution(
                Resolution(
                    strategy: .userChoice, chosen: [try #require(history.latest).hash], discarded: [],
                    contents: Self.contents("resolved\n"))))
        try history.append(Self.edit([.append("?")]))
        try history.append(.baseline(contents: Self.refused[0]))
        for (index, change) in history.log.enumerated() {
            let (whole, streamed) = history.replays(at: change)
            #expect(Self.difference(whole, streamed) == nil, "at change \(index)")
        }
        let (_, streamed) = history.replays(at: try #require(history.latest))
        let outcome = try streamed.get()
        #expect(outcome.model.text == "resolved\n?")
        #expect(outcome.refusedContents.count == 1)
        guard case .streamed = outcome.reading else {
            Issue.record("the replay read \(outcome.reading)")
            return
        }
    }

    /// A checkpoint whose contents do not load fails the replay as it fails the replay reading the whole tail, until
    /// a baseline after it sets the state without it (the stream stops where it needs the checkpoint's state, and the
    /// replay back from the head meets the baseline).
    @Test func aCheckpointThatDoesNotLoad() throws {
        let history = try History()
        try history.type(30)
        try history.store.checkpoints.save(of: history.id, at: history.log[20].vector, contents: Data([0x01]))
        let (whole, streamed) = history.replays(at: try #require(history.latest))
        #expect(Self.difference(whole, streamed) == nil)
        #expect(throws: DocumentError.self) { try streamed.get() }
        try history.append(.baseline(contents: Self.contents("again\n")))
        try history.type(10)
        let (wholeAfter, streamedAfter) = history.replays(at: try #require(history.latest))
        #expect(Self.difference(wholeAfter, streamedAfter) == nil)
        #expect(try streamedAfter.get().reading == .streamedThenLine(batches: 1))
    }

    /// A checkpoint of two heads joined has no change of its own: the replay passes it by and starts from the first
    /// change, and so does the stream.
    @Test func aCheckpointOfTwoHeads() throws {
        let history = try History()
        try history.type(30)
        let fork = history.log[25]
        let mine = try #require(history.latest)
        let theirs = try history.append(Self.edit([.insert(at: 0, text: "P")]), on: [fork], by: history.phone)
        try history.store.checkpoints.save(
            of: history.id, at: mine.vector.merging(theirs.vector), contents: Self.contents("JOINED\n"))
        let joined = try history.append(Self.edit([.append("J")]), on: [mine, theirs])
        try history.type(5)
        for head in [joined, try #require(history.latest)] {
            let (whole, streamed) = history.replays(at: head)
            #expect(Self.difference(whole, streamed) == nil)
            #expect(try !streamed.get().model.text.contains("JOINED"))
        }
    }

    // MARK: Histories that stop being one line

    /// Changes made on the tip and an older change of its line: an edit, whose primary parent is the tip (the stream
    /// leaves it to the replay back from the head, which passes through the tip), and a choice of the older change,
    /// whose state is the older one's.
    @Test func changesOnTheTipAndAnOlderChange() throws {
        let history = try History()
        try history.type(40)
        let older = history.log[30]
        let both = try history.append(Self.edit([.append("E")]), on: [try #require(history.latest), older])
        let (whole, streamed) = history.replays(at: both)
        #expect(Self.difference(whole, streamed) == nil)
        #expect(try streamed.get().reading == .streamedThenLine(batches: 1))
        try history.type(5)
        let choice = try history.append(
            .resolution(Resolution(strategy: .userChoice, chosen: [older.hash], discarded: [])),
            on: [try #require(history.latest), older])
        try history.type(3)
        for head in [choice, try #require(history.latest)] {
            let (whole, streamed) = history.replays(at: head)
            #expect(Self.difference(whole, streamed) == nil)
            #expect(try streamed.get().reading == .whole)
        }
    }

    /// Another device's edits made on an older change near the end of a long line: the past of each head is still
    /// one line, and streams to it. A change made on both versions stops the stream where the two lines meet in
    /// causal order; the state at it is replayed back from its head to the tip reached when its line passes through
    /// it, and otherwise (and for a merge the change graph computes) by the replay that reads the whole tail.
    @Test func aForkNearTheEndFallsBack() throws {
        let history = try History()
        try history.type(500)
        try history.fold(keeping: 20)
        let fork = history.log[490]
        try history.type(15)
        let mine = try #require(history.latest)
        var theirs = try history.append(Self.edit([.insert(at: 0, text: "P")]), on: [fork], by: history.phone)
        theirs = try history.append(Self.edit([.insert(at: 0, text: "Q")]), on: [theirs], by: history.phone)
        for head in [mine, theirs] {
            let (whole, streamed) = history.replays(at: head)
            #expect(Self.difference(whole, streamed) == nil)
            guard case .streamed = try streamed.get().reading else {
                Issue.record("the replay at a head read \(try streamed.get().reading)")
                continue
            }
        }
        // An edit after the phone's, on this device's line (its lamport timestamp above theirs), then an edit on both
        // heads: its primary parent is on this device's line, which the stream followed until the phone's edits.
        let next = try history.append(Self.edit([.append("N")]), on: [mine])
        let joined = try history.append(Self.edit([.append("J")]), on: [next, theirs])
        let (whole, streamed) = history.replays(at: joined)
        #expect(Self.difference(whole, streamed) == nil)
        #expect(try streamed.get().reading == .streamedThenLine(batches: 2))
        // A merge the change graph computes, and an edit on the phone's line after it.
        let merged = try history.append(
            .resolution(Resolution(strategy: .merge, chosen: [next.hash, theirs.hash], discarded: [])),
            on: [next, theirs], by: history.phone)
        let after = try history.append(Self.edit([.append("M")]), on: [merged], by: history.phone)
        for head in [merged, after] {
            let (whole, streamed) = history.replays(at: head)
            #expect(Self.difference(whole, streamed) == nil)
            #expect(try streamed.get().reading == .whole)
        }
        // The phone's line, joined with this device's: its primary parent is the phone's edit, off the line streamed.
        let theirsJoined = try history.append(Self.edit([.append("T")]), on: [theirs, mine], by: history.phone)
        let (wholeTheirs, streamedTheirs) = history.replays(at: theirsJoined)
        #expect(Self.difference(wholeTheirs, streamedTheirs) == nil)
    }

    /// Random histories, one line or several (two devices forking and merging, by edits on several heads, merges
    /// the change graph computes and choices among versions), with checkpoints (some of which do not load), baselines
    /// and resolutions with contents accepted or refused, operations that do not apply or decode, and folds: the
    /// streamed replay's outcome at the heads and at changes along the way is the replay's; on one line, it streams
    /// to the head unless the head sets the state itself.
    @Test(
        arguments: [
            (1, false), (2, false), (3, false), (4, false), (5, false), (6, false),
            (11, true), (12, true), (13, true), (14, true), (15, true), (16, true), (17, true), (18, true),
        ] as [(UInt64, Bool)])
    func randomHistoriesReplayAlike(seed: UInt64, forking: Bool) throws {
        var check = PropertyCheck(seed: seed)
        var random = SplitMix64(seed: seed)
        let history = try History(access: seed % 2 == 0 ? .exclusive : .shared)
        var tips: [Change] = [try history.append(Self.edit([.insert(at: 0, text: "root\n")]))]
        var badCheckpoint = false
        func operations() -> [TextDocument.Operation] {
            (0..<random.int(in: 1...3)).map { _ in
                switch random.int(in: 0...9) {
                case 0...4: .insert(at: random.int(in: 0...12), text: random.pick(["a", "b", "cd", "\n"]))
                case 5...7: .delete(at: random.int(in: 0...12), count: random.int(in: 1...3))
                case 8: .append(random.pick(["z", "yy"]))
                default: .replace(random.pick(["", "r\n"]))
                }
            }
        }
        for step in 0..<random.int(in: 80...240) {
            check.iteration = step
            let tip = random.pick(tips)
            let kind: ChangeKind
            switch random.int(in: 0...99) {
            case 0..<60: kind = Self.edit(operations())
            case 60..<63: kind = .edit(Edit(operations: Data([0xFF, UInt8(step & 0xFF)])))
            case 63..<67:
                let reversed = random.pick(history.log)
                kind = Self.edit(
                    operations(), intent: random.chance(1, in: 2) ? .undo(of: reversed.id) : .redo(of: reversed.id))
            case 67..<70: kind = .baseline(contents: Self.contents("base \(step)\n"))
            case 70..<73: kind = .baseline(contents: random.pick(Self.refused))
            case 73..<76:
                let contents = random.chance(1, in: 2) ? Self.contents("chosen \(step)\n") : random.pick(Self.refused)
                kind = .resolution(
                    Resolution(strategy: .userChoice, chosen: [tip.hash], discarded: [], contents: contents))
            case 76..<79: kind = .lifecycle(.rename(to: "Name \(step)"))
            case 79..<83:
                if forking, random.chance(1, in: 4) {
                    try history.store.checkpoints.save(of: history.id, at: tip.vector, contents: Data([0x01]))
                    badCheckpoint = true
                } else {
                    try history.checkpoint(at: tip, text: "mark \(step)\n")
                }
                continue
            case 83..<88:
                try history.fold(keeping: random.int(in: 0...6))
                continue
            default:
                guard forking else {
                    kind = Self.edit(operations())
                    break
                }
                if tips.count > 1, random.chance(1, in: 2) {
                    // Join the versions: an edit on them all, a merge the graph computes, or a choice of one.
                    let heads = tips
                    let merge: ChangeKind
                    switch random.int(in: 0...2) {
                    case 0: merge = Self.edit(operations())
                    case 1: merge = .resolution(Resolution(strategy: .merge, chosen: heads.map(\.hash), discarded: []))
                    default:
                        let kept = random.pick(heads)
                        merge = .resolution(
                            Resolution(
                                strategy: .userChoice, chosen: [kept.hash],
                                discarded: heads.filter { $0.hash != kept.hash }.map(\.hash)))
                    }
                    let joined = try history.append(merge, on: heads, by: random.chance(1, in: 2) ? history.phone : nil)
                    tips = [joined]
                } else {
                    // The phone's edit on an older change.
                    let older = history.log[random.int(in: max(0, history.log.count - 30)...(history.log.count - 1))]
                    try history.append(Self.edit(operations()), on: [older], by: history.phone)
                    tips = try history.store.heads(of: history.id)
                }
                continue
            }
            let author = tips.count > 1 && random.chance(1, in: 2) ? history.phone : nil
            try history.append(kind, on: [tip], by: author)
            tips = try history.store.heads(of: history.id)
        }
        var targets = try history.store.heads(of: history.id)
        for _ in 0..<6 { targets.append(random.pick(history.log)) }
        for (index, head) in targets.enumerated() where !check.shouldStop {
            check.iteration = 1_000 + index
            let streaming = Replay.Streaming(minimum: 0, cachedSegments: random.chance(1, in: 2) ? 0 : Int.max)
            let (whole, streamed) = history.replays(at: head, streaming: streaming)
            let difference = Self.difference(whole, streamed)
            check.expect(difference == nil, "at change \(head.id): \(difference ?? "")")
            guard !forking, !badCheckpoint, case .success(let outcome) = streamed else { continue }
            var refused: [ChangeHash] = []
            let setsItsState =
                Replay(store: history.store, document: history.id).resetState(at: head, refused: &refused) != nil
            if case .streamed = outcome.reading {
                check.expect(!setsItsState, "at change \(head.id): a change that sets its state streamed")
            } else {
                check.expect(setsItsState, "at change \(head.id): one line read \(outcome.reading)")
            }
        }
    }

    // MARK: The open

    /// A document opened after a long history with no checkpoint near its head (a bulk import) shows the state the
    /// replay gives.
    @Test func aDocumentOpensAfterALongHistory() async throws {
        let fixture = try LibraryFixture(seed: 61)
        let library = try fixture.library()
        let created = try await library.create(TextDocument.self, named: "Long", contents: TextDocument(text: "long\n"))
        let id = created.id
        try await created.close()
        var kinds: [ChangeKind] = []
        for index in 0..<5_000 {
            kinds.append(Self.edit([index % 2 == 0 ? .insert(at: 2, text: "b") : .delete(at: 2, count: 1)]))
        }
        try library.store.append(kinds, to: id)
        try library.store.append(Self.edit([.append("end\n")]), to: id)
        let head = try #require(try library.store.heads(of: id).first)
        let expected = try Replay(store: library.store, document: id).state(at: head)
        let document = try await library.open(id, as: TextDocument.self)
        #expect(await document.model.text == expected.model.text)
        #expect(await document.model.text == "long\nend\n")
        #expect(await document.skippedOperations == expected.skippedOperations)
        try await document.close()
    }
}
