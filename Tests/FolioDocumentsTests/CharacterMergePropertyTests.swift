import FolioConflicts
import FolioCore
import FolioDocuments
import FolioMerge
import FolioModels
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Devices editing one text document under `merge`, syncing in random pairs and orders. Edits that never delete a
/// character another version deletes never wait for a person: the devices end with the same text, the text a plain
/// list CRDT (`ReferenceListCRDT`) computes for the history in their logs. Edits that delete or replace the same
/// characters differently always wait for a person, who then settles them.
///
/// Each test runs once per seed of a fixed table, and names its seed when it fails; `FOLIO_SEED=N` replays one.
@Suite(.workPool) struct CharacterMergePropertyTests {
    static let seeds: [UInt64] = [11, 2_718, 31_415, 161_803, 1_414_213, 17_320_508, 22_360_679, 26_457_513]

    /// The tabled seed, or the one `FOLIO_SEED` names.
    static func seed(_ tabled: UInt64) -> UInt64 {
        ProcessInfo.processInfo.environment["FOLIO_SEED"].flatMap { UInt64($0) } ?? tabled
    }

    /// Two to five devices type anywhere, at the start often, and delete only characters that are theirs (those of
    /// their own line of the first text, and those they typed): no character is deleted by two versions, so every
    /// merge is silent, and the text is the reference's.
    @Test(arguments: seeds) func nonOverlappingEditsMergeSilentlyAsTheReference(seed tabled: UInt64) async throws {
        let seed = Self.seed(tabled)
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        var merges = 0
        for iteration in 0..<3 {
            check.iteration = iteration
            let devices = 2 + Int(generator.next() % 4)
            let outcome = try await runApart(devices: devices, steps: 24, using: &generator)
            merges += outcome.merges
            check.expect(outcome.waited.isEmpty, "a merge waited for a person: \(outcome.waited)")
            check.expect(
                Set(outcome.texts).count == 1, "the devices disagree: \(outcome.texts.map(\.debugDescription))")
            check.expect(
                outcome.texts[0] == outcome.reference,
                "\(outcome.texts[0].debugDescription) ≠ \(outcome.reference.debugDescription)")
            if check.shouldStop { return }
        }
        check.expect(merges > 0, "no history merged characters")
    }

    /// Devices each type at the end of a line of their own (where their cursor stays), syncing in random pairs: once
    /// all have synced, every line holds its device's keystrokes, in the order typed. An edit made at a position of
    /// a device's model means the character there in every device's merge.
    @Test(arguments: seeds) func keystrokesAtEachDevicesLineEndStayInOrder(seed tabled: UInt64) async throws {
        let seed = Self.seed(tabled)
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        for iteration in 0..<3 {
            check.iteration = iteration
            let count = 3 + Int(generator.next() % 4)
            let fixtures = try (0..<count).map { _ in try LibraryFixture(seed: generator.next()) }
            let libraries = try fixtures.map(Self.library)
            let base = (0..<count).map { "\($0):\n" }.joined()
            let documents = try await Self.open(base, named: "Lines", on: libraries)
            let first = documents[0]
            var typed = Array(repeating: "", count: count)
            for step in 0..<60 {
                let device = Int(generator.next() % UInt64(count))
                if generator.next() % 3 == 0 {
                    let other = Int(generator.next() % UInt64(count))
                    guard other != device else { continue }
                    try exchange(libraries[device], libraries[other], first.id)
                    try await documents[device].refresh()
                    try await documents[other].refresh()
                    continue
                }
                let letter = String(UnicodeScalar(UInt8(97 + step % 26)))
                typed[device] += letter
                try await documents[device].perform { document in
                    var position = 0
                    for line in document.model.text.split(separator: "\n", omittingEmptySubsequences: false) {
                        position += line.unicodeScalars.count
                        if line.hasPrefix("\(device):") { break }
                        position += 1
                    }
                    try document.edit(.insert(at: position, text: letter))
                }
            }
            for _ in 0..<4 {
                for a in 0..<count {
                    for b in 0..<count where a != b {
                        try exchange(libraries[a], libraries[b], first.id)
                        try await documents[a].refresh()
                        try await documents[b].refresh()
                    }
                }
            }
            let expected = (0..<count).map { "\($0):\(typed[$0])\n" }.joined()
            var texts: [String] = []
            for document in documents { texts.append(await document.model.text) }
            for document in documents { try await document.close() }
            check.expect(Set(texts).count == 1, "the devices disagree: \(texts.map(\.debugDescription))")
            check.expect(
                texts[0] == expected, "\(texts[0].debugDescription) ≠ \(expected.debugDescription) (\(count) devices)")
            if check.shouldStop { return }
        }
    }

    /// A change another device made arrives in the log (as a live sync's ingest puts it there) between the moment a
    /// device reads its model and the moment it edits at a position it read: the edit lands where it was meant, and
    /// both merge (an edit that caught up first would apply the position to a text that moved).
    @Test func anEditAppliesToTheTextItsPositionWasReadFrom() async throws {
        let libraries = try [LibraryFixture(seed: 71), LibraryFixture(seed: 72)].map(Self.library)
        let first = try await libraries[0].create(
            TextDocument.self, named: "Lines", contents: TextDocument(text: "0:\n1:\n"))
        try exchange(libraries[0], libraries[1], first.id)
        let second = try await libraries[1].open(first.id, as: TextDocument.self)
        try await second.edit(.insert(at: 2, text: "zero"))
        let read = await first.model.text
        #expect(read == "0:\n1:\n")
        // The other device's change reaches this device's log; its open document has not refreshed yet.
        try exchange(libraries[0], libraries[1], first.id)
        try await first.edit(.insert(at: read.unicodeScalars.count - 1, text: "one"))
        try await first.refresh()
        try exchange(libraries[0], libraries[1], first.id)
        try await second.refresh()
        #expect(await first.model.text == "0:zero\n1:one\n")
        #expect(await second.model.text == "0:zero\n1:one\n")
        try await first.close()
        try await second.close()
    }

    /// Two devices, after edits that merge, delete or replace stretches of one text that share a character, not in
    /// the same way (and a third sometimes types elsewhere): both wait for a person, the merge names the
    /// overlapping stretch, and once the person keeps one version the devices agree on it.
    @Test(arguments: seeds) func overlappingEditsAlwaysWaitForAPerson(seed tabled: UInt64) async throws {
        let seed = Self.seed(tabled)
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        for iteration in 0..<4 {
            check.iteration = iteration
            let outcome = try await runOverlapping(using: &generator)
            check.expect(
                outcome.waiting == [true, true], "\(outcome.edits): in conflict on each device: \(outcome.waiting)")
            check.expect(
                outcome.conflicts.contains { $0.base?.unicodeScalars.contains(outcome.shared) == true },
                "\(outcome.edits): the conflicts \(outcome.conflicts) miss the shared \(outcome.shared.debugDescription)"
            )
            check.expect(
                outcome.settled.allSatisfy { $0 == outcome.kept }, "\(outcome.edits): settled as \(outcome.settled)")
            if check.shouldStop { return }
        }
    }

    /// A text document made on the first of `libraries` with `base`, given to the others, open on each.
    static func open(_ base: String, named name: String, on libraries: [DocumentLibrary]) async throws
        -> [Document<TextDocument>]
    {
        let first = try await libraries[0].create(TextDocument.self, named: name, contents: TextDocument(text: base))
        var documents = [first]
        for library in libraries.dropFirst() {
            try exchange(libraries[0], library, first.id)
            documents.append(try await library.open(first.id, as: TextDocument.self))
        }
        return documents
    }

    static func library(_ fixture: LibraryFixture) throws -> DocumentLibrary {
        try DocumentLibrary(
            at: fixture.root, key: fixture.key, deviceName: fixture.device.name, clock: fixture.clock,
            identifiers: fixture.identifiers, autosave: .manual, conflictPolicy: ConflictPolicy(default: .merge),
            backgroundWork: false)
    }

    /// What a history of edits that do not overlap came to.
    struct ApartOutcome {
        /// The devices' final texts.
        var texts: [String]
        /// The reference's text for the log of the first device.
        var reference: String
        /// How many merges computed from the change graph that log holds (edits made on a merge, merges without contents).
        var merges: Int
        /// The texts of the documents left in conflict after a sync, if any.
        var waited: [String]
    }

    /// One random history of edits that never delete a character two devices may delete: device `d` types the
    /// letters `2d` and `2d + 1` of `a`–`j`, and deletes only those and the `A`–`E` letter of its own line.
    private func runApart(devices count: Int, steps: Int, using generator: inout SplitMix64) async throws
        -> ApartOutcome
    {
        let fixtures = try (0..<count).map { _ in try LibraryFixture(seed: generator.next()) }
        let libraries = try fixtures.map(Self.library)
        let letters = Array("abcdefghij")
        let lines = Array("ABCDE")
        let base = (0..<count).map { String(repeating: lines[$0], count: 4) + "\n" }.joined()
        let documents = try await Self.open(base, named: "Notes", on: libraries)
        let first = documents[0]
        var waited: [String] = []
        func sync(_ a: Int, _ b: Int) async throws {
            try exchange(libraries[a], libraries[b], first.id)
            for device in [a, b] {
                try await documents[device].refresh()
                if await documents[device].state.contains(.inConflict) {
                    waited.append(await documents[device].model.text)
                }
            }
        }
        for _ in 0..<steps {
            let device = Int(generator.next() % UInt64(count))
            if generator.next() % 3 == 0 {
                let other = Int(generator.next() % UInt64(count))
                guard other != device else { continue }
                try await sync(device, other)
                continue
            }
            let text = Array(await documents[device].model.text.unicodeScalars)
            let owned: (Unicode.Scalar) -> Bool = { scalar in
                scalar == lines[device].unicodeScalars.first!
                    || letters[(2 * device)...(2 * device + 1)].contains {
                        $0.unicodeScalars.first! == scalar
                    }
            }
            // A third of the edits go to the start, where devices meet.
            let position = generator.next() % 3 == 0 ? 0 : Int(generator.next() % UInt64(text.count + 1))
            if generator.next() % 3 == 0, let start = text.indices.first(where: { $0 >= position && owned(text[$0]) }) {
                var end = start + 1
                while end < text.count, end - start < 3, owned(text[end]) { end += 1 }
                try await documents[device].edit(.delete(at: start, count: end - start))
            } else {
                let run = String(
                    (0..<(1 + Int(generator.next() % 3))).map { _ in letters[2 * device + Int(generator.next() % 2)] })
                try await documents[device].edit(.insert(at: position, text: run))
            }
        }
        // Everyone syncs with everyone until nothing new is made.
        for _ in 0..<6 {
            for a in 0..<count {
                for b in 0..<count where a != b { try await sync(a, b) }
            }
        }
        var texts: [String] = []
        for document in documents { texts.append(await document.model.text) }
        for document in documents { try await document.close() }
        // Versions that merged silently stay heads until an edit is made on them.
        let heads = try libraries[0].store.heads(of: first.id)
        let merges = try libraries[0].store.changes(of: first.id, since: VersionVector()).filter {
            $0.mergesCharacters(of: TextDocument.self)
        }
        return ApartOutcome(
            texts: texts, reference: try referenceText(of: first.id, at: heads, in: libraries[0].store),
            merges: merges.count, waited: waited)
    }

    /// What a history with one overlap came to.
    struct OverlapOutcome {
        /// The two overlapping edits, for the failure message.
        var edits: String
        /// Whether each of the two devices waited for a person after the sync.
        var waiting: [Bool]
        /// The conflicts the merge named.
        var conflicts: [MergeConflict]
        /// A character both edits deleted.
        var shared: Unicode.Scalar
        /// The text of the version the person kept.
        var kept: String
        /// Each device's text once the person's choice arrived.
        var settled: [String]
    }

    /// Two devices (and sometimes a third) make edits that merge, sync, then each delete a stretch holding one
    /// shared character, and maybe type in its place, not both the same pure deletion; the third types elsewhere.
    private func runOverlapping(using generator: inout SplitMix64) async throws -> OverlapOutcome {
        let words = ["oat", "milk", "eggs", "rye", "bread", "tea", "jam", "rice"]
        let base = (0..<3).map { _ in
            (0..<4).map { _ in words[Int(generator.next() % UInt64(words.count))] }.joined(separator: " ") + "\n"
        }.joined()
        let count = generator.next() % 2 == 0 ? 2 : 3
        let fixtures = try (0..<count).map { _ in try LibraryFixture(seed: generator.next()) }
        let libraries = try fixtures.map(Self.library)
        let documents = try await Self.open(base, named: "List", on: libraries)
        let first = documents[0]
        // Edits that merge silently first: each device types a word somewhere.
        for device in 0..<count {
            let length = await documents[device].model.scalarCount
            try await documents[device].edit(
                .insert(at: Int(generator.next() % UInt64(length + 1)), text: "\(device)"))
        }
        for _ in 0..<2 {
            for a in 0..<count {
                for b in 0..<count where a != b {
                    try exchange(libraries[a], libraries[b], first.id)
                    try await documents[a].refresh()
                    try await documents[b].refresh()
                }
            }
        }
        // The overlap: both stretches hold the scalar at `shared` of the text both devices show.
        let text = Array(await documents[0].model.text.unicodeScalars)
        #expect(await documents[1].model.text == String(String.UnicodeScalarView(text)))
        let shared = Int(generator.next() % UInt64(text.count))
        func stretch() -> Range<Int> {
            let start = max(0, shared - Int(generator.next() % 4))
            return start..<min(text.count, shared + 1 + Int(generator.next() % 4))
        }
        let one = stretch()
        let other = stretch()
        var typed = [
            String(repeating: "x", count: Int(generator.next() % 3)),
            String(repeating: "y", count: Int(generator.next() % 3)),
        ]
        if one == other, typed.allSatisfy(\.isEmpty) { typed[1] = "y" }
        for (device, range) in [one, other].enumerated() {
            try await documents[device].edit(.delete(at: range.lowerBound, count: range.count))
            if !typed[device].isEmpty {
                try await documents[device].edit(.insert(at: range.lowerBound, text: typed[device]))
            }
        }
        if count == 3 { try await documents[2].edit(.insert(at: 0, text: "z")) }
        let edits =
            "\(text.count) scalars, \(one) → \(typed[0].debugDescription), \(other) → \(typed[1].debugDescription)"
        for a in 0..<count {
            for b in 0..<count where a != b {
                try exchange(libraries[a], libraries[b], first.id)
                try await documents[a].refresh()
                try await documents[b].refresh()
            }
        }
        var waiting: [Bool] = []
        for device in 0..<2 { waiting.append(await documents[device].state.contains(.inConflict)) }
        let merge = try await documents[1].resolveByMerging()
        // The person keeps the first device's version of the text.
        let versions = try await documents[0].versions()
        let keptVersion = try #require(versions.first { $0.savingDevice.id == fixtures[0].device.id })
        try await documents[0].replace(with: keptVersion)
        var settled: [String] = []
        for b in 1..<count {
            try exchange(libraries[0], libraries[b], first.id)
            try await documents[b].refresh()
        }
        for document in documents { settled.append(await document.model.text) }
        for document in documents { try await document.close() }
        return OverlapOutcome(
            edits: edits, waiting: waiting, conflicts: merge?.conflicts ?? [], shared: text[shared],
            kept: keptVersion.contents.text, settled: settled)
    }

    /// The reference CRDT's text at `head`: every change of the log an event whose parents are its content parents
    /// (a `merge` without contents: the versions it kept; another resolution without contents made on several
    /// parents: all of them, keeping its primary parent's text; any other change: its primary parent), with its text
    /// edits (a baseline or a resolution with contents: the replacement of the text).
    private func referenceText(of document: DocumentID, at heads: [Change], in store: ChangeLogStore) throws -> String {
        let changes = try store.changes(of: document, since: VersionVector()).sorted {
            ($0.lamport, $0.id) < ($1.lamport, $1.id)
        }
        let byHash = Dictionary(uniqueKeysWithValues: changes.map { ($0.hash, $0) })
        let rule = PrimaryParentRule<Never> { byHash[$0] }
        let agents = Dictionary(uniqueKeysWithValues: changes.map(\.id).sorted().enumerated().map { ($1, $0) })
        var reference = ReferenceListCRDT()
        var index: [ChangeHash: Int] = [:]
        for change in changes {
            var parents: [ChangeHash] = []
            var edits: [FolioMerge.TextEdit] = []
            var kept: ChangeHash?
            switch change.kind {
            case .resolution(let resolution) where resolution.strategy == .merge && resolution.contents == nil:
                parents = change.keptVersions
            case .edit(let edit) where edit.isMadeOnMerge && change.parents.count > 1:
                parents = change.parents
            case .resolution(let resolution) where resolution.contents == nil && change.parents.count > 1:
                // A choice among versions: made on all of them, with the text of the one it keeps.
                parents = change.parents
                if case .parent(let parent) = rule.primaryParent(of: change) { kept = parent.hash }
            default:
                if case .parent(let parent) = rule.primaryParent(of: change) { parents = [parent.hash] }
            }
            switch change.kind {
            case .edit(let edit):
                for operation in try TextDocument.Operation.decodeGroup(edit.operations) {
                    edits += TextDocument.textEdits(of: operation) ?? []
                }
            case .baseline(let contents):
                edits = [
                    FolioMerge.TextEdit.replaceAll(
                        with: try TextDocument(contents: DocumentContents(decoding: contents)).mergeableText)
                ]
            case .resolution(let resolution):
                if let contents = resolution.contents {
                    edits = [
                        FolioMerge.TextEdit.replaceAll(
                            with: try TextDocument(contents: DocumentContents(decoding: contents)).mergeableText)
                    ]
                }
            case .lifecycle:
                break
            }
            if let kept {
                index[change.hash] = reference.add(
                    agent: agents[change.id]!, parents: parents.compactMap { index[$0] },
                    keeping: [index[kept]].compactMap { $0 })
            } else {
                index[change.hash] = reference.add(
                    agent: agents[change.id]!, parents: parents.compactMap { index[$0] }, edits: edits)
            }
        }
        return reference.text(atVersionOf: heads.map { index[$0.hash]! })
    }
}
