import FolioConflicts
import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioSync
import FolioTesting
import Foundation
import Testing

/// What arrives together is taken together: a device that ingests messages in batches (`SyncDriver.receive(batch:)`,
/// one transaction each) and refreshes its open document only now and then ends exactly where one that takes every
/// message alone and refreshes after each does, over random histories of several devices (edits apart, merges,
/// resolutions of the authors' policies) delivered in random orders: the same log, the same text, the same versions
/// and the same conflicts, and both equal to a document opened afresh on the whole log.
///
/// Each test runs once per seed of a fixed table, and names its seed when it fails; `FOLIO_SEED=N` replays one.
@Suite struct BatchedArrivalPropertyTests {
    static let seeds: [UInt64] = [5, 1_729, 65_537, 3_141_592, 27_182_818, 141_421_356]

    /// The tabled seed, or the one `FOLIO_SEED` names.
    static func seed(_ tabled: UInt64) -> UInt64 {
        ProcessInfo.processInfo.environment["FOLIO_SEED"].flatMap { UInt64($0) } ?? tabled
    }

    static func library(_ fixture: LibraryFixture, policy: ConflictStrategy) throws -> DocumentLibrary {
        try DocumentLibrary(
            at: fixture.root, key: fixture.key, deviceName: fixture.device.name, clock: fixture.clock,
            identifiers: fixture.identifiers, autosave: .manual, conflictPolicy: ConflictPolicy(default: policy),
            backgroundWork: false)
    }

    /// What a receiver shows at the end.
    struct Shown: Equatable {
        var log: Set<ChangeHash>
        var text: String
        var versions: [String]
        var inConflict: Bool
        var conflicts: Int
    }

    static func shown(_ library: DocumentLibrary, _ document: Document<TextDocument>) async throws -> Shown {
        let log = Set(try library.store.changes(of: document.id, since: VersionVector()).map(\.hash))
        let versions = try await document.versions().map {
            "\($0.head.hash.shortHex) \($0.contents.text.debugDescription)"
        }
        return Shown(
            log: log, text: await document.model.text, versions: versions.sorted(),
            inConflict: await document.state.contains(.inConflict),
            conflicts: try await document.conflictHistory().count)
    }

    @Test(arguments: seeds) func batchesAndRareRefreshesEndAsOneMessageAtATime(seed tabled: UInt64) async throws {
        let seed = Self.seed(tabled)
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        var batches = 0
        for iteration in 0..<2 {
            check.iteration = iteration
            let policy = [ConflictStrategy.merge, .latestWins, .keepBoth][Int(generator.next() % 3)]
            let authors = try (0..<3).map { _ in
                try Self.library(LibraryFixture(seed: generator.next()), policy: policy)
            }
            let documents = try await CharacterMergePropertyTests.open(
                "one two three\nfour five six\n", named: "Notes", on: authors)
            let id = documents[0].id
            // The receivers hold the first text and have the document open.
            let receivers = try (0..<2).map { _ in
                try Self.library(LibraryFixture(seed: generator.next()), policy: .merge)
            }
            var opened: [Document<TextDocument>] = []
            for receiver in receivers {
                try exchange(authors[0], receiver, id)
                opened.append(try await receiver.open(id, as: TextDocument.self))
            }
            try await Self.write(on: authors, documents, steps: 30, using: &generator)

            // Every author's log reaches both receivers, author by author in a random order, over a session each:
            // the first receiver takes what waits in random batches and refreshes now and then, the second takes
            // each message alone and refreshes after each.
            var order = Array(authors.indices)
            for index in order.indices.reversed() { order.swapAt(index, Int(generator.next() % UInt64(index + 1))) }
            let runs = generator.next() % 2 == 0
            for (session, author) in order.enumerated() {
                let limits = SyncSession.Limits(changesPerMessage: 1 + Int(generator.next() % 4))
                var cuts = SplitMix64(seed: generator.next())
                batches += try await Self.deliver(
                    from: authors[author], to: receivers[0], session: UInt64(session), limits: limits, runs: runs,
                    batch: { 1 + Int(cuts.next() % 4) }, refresh: { cuts.next() % 3 == 0 }, document: opened[0])
                _ = try await Self.deliver(
                    from: authors[author], to: receivers[1], session: UInt64(session), limits: limits, runs: runs,
                    batch: { 1 }, refresh: { true }, document: opened[1])
            }
            for document in opened { try await document.refresh() }
            let first = try await Self.shown(receivers[0], opened[0])
            let second = try await Self.shown(receivers[1], opened[1])
            check.expect(first == second, "batched \(first) ≠ one by one \(second)")
            // A third device that receives the whole log at once and opens the document afresh.
            let fresh = try Self.library(LibraryFixture(seed: generator.next()), policy: .merge)
            for author in authors { try exchange(author, fresh, id) }
            let afresh = try await fresh.open(id, as: TextDocument.self)
            let third = try await Self.shown(fresh, afresh)
            check.expect(third.text == first.text && third.versions == first.versions, "afresh \(third) ≠ \(first)")
            var all = Set<ChangeHash>()
            for author in authors {
                all.formUnion(try author.store.changes(of: id, since: VersionVector()).map(\.hash))
            }
            check.expect(first.log == all, "the receiver lacks \(all.subtracting(first.log).count) changes")
            if check.shouldStop { return }
        }
        check.expect(batches > 0, "no delivery took several messages at once")
    }

    /// Random edits on random devices (typing, deleting, replacing, often at the same places), and exchanges between
    /// random pairs that the open documents pick up (and settle by their policy).
    static func write(
        on libraries: [DocumentLibrary], _ documents: [Document<TextDocument>], steps: Int,
        using generator: inout SplitMix64
    ) async throws {
        let id = documents[0].id
        for step in 0..<steps {
            let device = Int(generator.next() % UInt64(libraries.count))
            if generator.next() % 4 == 0 {
                let other = Int(generator.next() % UInt64(libraries.count))
                guard other != device else { continue }
                try exchange(libraries[device], libraries[other], id)
                try await documents[device].refresh()
                try await documents[other].refresh()
                continue
            }
            let count = await documents[device].model.scalarCount
            let position = Int(generator.next() % UInt64(count + 1))
            let deleting = min(Int(generator.next() % 4), count - position)
            var operations: [TextDocument.Operation] = []
            if deleting > 0, generator.next() % 2 == 0 { operations.append(.delete(at: position, count: deleting)) }
            if operations.isEmpty || generator.next() % 2 == 0 {
                operations.append(.insert(at: position, text: String(UnicodeScalar(UInt8(97 + step % 26)))))
            }
            // A document in conflict takes edits too; one refused by a closed or deleted document is passed over.
            try? await documents[device].edit(operations)
        }
    }

    /// Runs a session between `author` (responder) and `receiver` (initiator) over a reliable pipe: the receiver takes
    /// what waits for it in batches of `batch()` messages, and refreshes `document` after a batch when `refresh()`
    /// says so. Returns how many batches held several messages.
    static func deliver(
        from author: DocumentLibrary, to receiver: DocumentLibrary, session: UInt64, limits: SyncSession.Limits,
        runs: Bool, batch: () -> Int, refresh: () -> Bool, document: Document<TextDocument>
    ) async throws -> Int {
        let formats: SyncDriver.Formats = runs ? .runs : .plain
        var initiator = try SyncDriver(
            store: receiver.store, role: .initiator, id: 100 + session, limits: limits, formats: formats)
        var responder = try SyncDriver(
            store: author.store, role: .responder, id: 200 + session, limits: limits, formats: formats)
        var toReceiver: [[UInt8]] = []
        var toAuthor = try initiator.start()
        var several = 0
        var rounds = 0
        while !(initiator.isFinished && responder.isFinished), rounds < 10_000 {
            rounds += 1
            if !toAuthor.isEmpty {
                let message = toAuthor.removeFirst()
                toReceiver += try responder.receive(batch: [message])
            } else if !toReceiver.isEmpty {
                let count = min(batch(), toReceiver.count)
                if count > 1 { several += 1 }
                let delivered = Array(toReceiver.prefix(count))
                toReceiver.removeFirst(count)
                toAuthor += try initiator.receive(batch: delivered)
                if refresh() { try await document.refresh() }
            } else {
                toAuthor += try initiator.tick()
                toReceiver += try responder.tick()
                if toAuthor.isEmpty && toReceiver.isEmpty { break }
            }
        }
        return several
    }
}
