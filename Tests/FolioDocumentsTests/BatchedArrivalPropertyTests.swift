import FolioConflicts
import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioSync
import FolioTestWorkPool
import FolioTesting
import Foundation
import Synchronization
import Testing

/// What arrives together is taken together: a device that ingests messages in batches (`SyncDriver.receive(batch:)`,
/// one transaction each) and refreshes its open document only now and then ends exactly where one that takes every
/// message alone and refreshes after each does, over random histories of several devices (edits apart, merges,
/// resolutions of the authors' policies) delivered in random orders: the same changes of the others, the same text and
/// the same versions, both equal to a document opened afresh on the whole log. A receiver that settles nothing by
/// itself (`askUser`) ends with the same log and the same conflicts; under `merge`, when a receiver merges a version
/// that several devices reached apart depends on what it saw, but such a merge changes no text.
///
/// Each test runs once per seed of a fixed table, and names its seed when it fails; `FOLIO_SEED=N` replays one. The
/// sessions run the stores' work on the test's thread, so the seeds run one at a time and each round yields: the
/// whole suite's other tests keep the cooperative pool's threads.
@Suite(.serialized, .workPool) struct BatchedArrivalPropertyTests {
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
        /// The changes other devices made.
        var others: Set<ChangeHash>
        /// What the receiver wrote itself: the strategy of each resolution, the kind of anything else.
        var own: [String]
        var text: String
        /// Each version's head (`own` for one of the receiver's merges) and text.
        var versions: [String]
        var inConflict: Bool
        var conflicts: Int
    }

    static func shown(_ library: DocumentLibrary, _ document: Document<TextDocument>) async throws -> Shown {
        let log = try library.store.changes(of: document.id, since: VersionVector())
        let own = log.filter { $0.id.device == library.device.id }.map { change in
            if case .resolution(let resolution) = change.kind { "\(resolution.strategy)" } else { "\(change.kind)" }
        }
        // A version by its head, or as this device's own merge when the head is one (whose identity is the device's).
        let versions = try await document.versions().map { version in
            let head = version.head.id.device == library.device.id ? "own" : version.head.hash.shortHex
            return "\(head) \(version.contents.text.debugDescription)"
        }
        return Shown(
            others: Set(log.filter { $0.id.device != library.device.id }.map(\.hash)), own: own,
            text: await document.model.text, versions: versions.sorted(),
            inConflict: await document.state.contains(.inConflict),
            conflicts: try await document.conflictHistory().count)
    }

    @Test(arguments: seeds) func batchesAndRareRefreshesEndAsOneMessageAtATime(seed tabled: UInt64) async throws {
        let seed = Self.seed(tabled)
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        var batches = 0
        for iteration in 0..<3 {
            check.iteration = iteration
            let policy = [ConflictStrategy.merge, .latestWins, .keepBoth][Int(generator.next() % 3)]
            let authors = try (0..<3).map { _ in
                try Self.library(LibraryFixture(seed: generator.next()), policy: policy)
            }
            // Shared: a document kept on its device is not synced.
            let created = try await authors[0].create(
                TextDocument.self, named: "Notes", in: .shared,
                contents: TextDocument(text: "one two three\nfour five six\n"))
            var documents = [created]
            for author in authors.dropFirst() {
                try await Self.sync(authors[0], author)
                documents.append(try await author.open(created.id, as: TextDocument.self))
            }
            let id = documents[0].id
            // The receivers hold the first text and have the document open.
            let receiverPolicy = generator.next() % 2 == 0 ? ConflictStrategy.merge : .askUser
            let receivers = try (0..<2).map { _ in
                try Self.library(LibraryFixture(seed: generator.next()), policy: receiverPolicy)
            }
            var opened: [Document<TextDocument>] = []
            for receiver in receivers {
                try await Self.sync(authors[0], receiver)
                opened.append(try await receiver.open(id, as: TextDocument.self))
            }
            try await Self.write(on: authors, documents, steps: 40, using: &generator)

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
            check.expect(first.others == second.others, "the logs differ in what other devices made")
            check.expect(
                first.text == second.text && first.versions == second.versions && first.inConflict == second.inConflict,
                "batched \(first.text.debugDescription) \(first.versions) ≠ one by one \(second.text.debugDescription) \(second.versions)"
            )
            if receiverPolicy == .askUser {
                // A receiver that settles nothing by itself adds nothing: the logs and the conflicts are the same.
                check.expect(
                    first.own.isEmpty && second.own.isEmpty, "a receiver asked to wait wrote \(first.own) \(second.own)"
                )
                check.expect(first.conflicts == second.conflicts, "conflicts \(first.conflicts) ≠ \(second.conflicts)")
            } else {
                // Under `merge`, a receiver merges a version that several devices reached apart when it sees it: when
                // depends on what it saw, but such a merge changes no text.
                check.expect(
                    (first.own + second.own).allSatisfy { $0 == "merge" }, "a receiver wrote \(first.own) \(second.own)"
                )
            }
            // A third device that receives the whole log at once and opens the document afresh.
            let fresh = try Self.library(LibraryFixture(seed: generator.next()), policy: receiverPolicy)
            for author in authors { try await Self.sync(author, fresh) }
            let afresh = try await fresh.open(id, as: TextDocument.self)
            let third = try await Self.shown(fresh, afresh)
            check.expect(third.text == first.text && third.versions == first.versions, "afresh \(third) ≠ \(first)")
            var all = Set<ChangeHash>()
            for author in authors {
                all.formUnion(try author.store.changes(of: id, since: VersionVector()).map(\.hash))
            }
            check.expect(first.others == all, "the receiver lacks \(all.subtracting(first.others).count) changes")
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
        for step in 0..<steps {
            await Task.yield()
            let device = Int(generator.next() % UInt64(libraries.count))
            if generator.next() % 4 == 0 {
                let other = Int(generator.next() % UInt64(libraries.count))
                guard other != device else { continue }
                try await sync(libraries[device], libraries[other])
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

    /// Two devices catch up with each other over a session, as a sync does (signed heads and all: a device passes on
    /// only what a head vouches for).
    static func sync(_ first: DocumentLibrary, _ second: DocumentLibrary) async throws {
        _ = try await deliver(
            from: first, to: second, session: sessions.add(1, ordering: .relaxed).newValue,
            limits: SyncSession.Limits(), runs: false, batch: { 1 },
            refresh: { false }, document: nil)
    }
    /// Session numbers, each used once.
    static let sessions = Atomic<UInt64>(1_000)

    /// Runs a session between `author` (responder) and `receiver` (initiator) over a reliable pipe: the receiver takes
    /// what waits for it in batches of `batch()` messages, and refreshes `document` after a batch when `refresh()`
    /// says so. Returns how many batches held several messages.
    static func deliver(
        from author: DocumentLibrary, to receiver: DocumentLibrary, session: UInt64, limits: SyncSession.Limits,
        runs: Bool, batch: () -> Int, refresh: () -> Bool, document: Document<TextDocument>?
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
            await Task.yield()
            if !toAuthor.isEmpty {
                let message = toAuthor.removeFirst()
                toReceiver += try responder.receive(batch: [message])
            } else if !toReceiver.isEmpty {
                let count = min(batch(), toReceiver.count)
                if count > 1 { several += 1 }
                let delivered = Array(toReceiver.prefix(count))
                toReceiver.removeFirst(count)
                toAuthor += try initiator.receive(batch: delivered)
                if refresh(), let document { try await document.refresh() }
            } else {
                toAuthor += try initiator.tick()
                toReceiver += try responder.tick()
                if toAuthor.isEmpty && toReceiver.isEmpty { break }
            }
        }
        return several
    }
}
