import FolioConflicts
import FolioCore
import FolioDocuments
import FolioMerge
import FolioModels
import FolioStore
import FolioTesting
import Foundation
import Testing

/// Devices editing one text document under `merge`, syncing in random pairs and orders, end with the same text, and
/// that text is what a plain list CRDT (`ReferenceListCRDT`) computes for the history in their logs.
@Suite struct CharacterMergePropertyTests {
    @Test(arguments: 2...5) func devicesConvergeOnTheReferenceText(devices: Int) async throws {
        let seed = TestSeed.make() &+ UInt64(devices)
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        var merges = 0
        for iteration in 0..<4 {
            check.iteration = iteration
            let (texts, reference, merged) = try await run(devices: devices, steps: 24, using: &generator)
            merges += merged
            check.expect(Set(texts).count == 1, "the devices disagree: \(texts.map(\.debugDescription))")
            check.expect(texts[0] == reference, "\(texts[0].debugDescription) ≠ \(reference.debugDescription)")
            if check.shouldStop { return }
        }
        check.expect(merges > 0, "no history merged characters")
    }

    /// One random history: the devices' final texts, the reference's text for the log of the first, and how many
    /// merges without contents that log holds.
    private func run(devices count: Int, steps: Int, using generator: inout SplitMix64) async throws -> (
        [String], String, Int
    ) {
        let fixtures = try (0..<count).map { _ in try LibraryFixture(seed: generator.next()) }
        let libraries = try fixtures.map { fixture in
            try DocumentLibrary(
                at: fixture.root, key: fixture.key, deviceName: fixture.device.name, clock: fixture.clock,
                identifiers: fixture.identifiers, autosave: .manual, conflictPolicy: ConflictPolicy(default: .merge),
                backgroundWork: false)
        }
        let first = try await libraries[0].create(
            TextDocument.self, named: "Notes", contents: TextDocument(text: "one two\n"))
        var documents = [first]
        for library in libraries.dropFirst() {
            try exchange(libraries[0], library, first.id)
            documents.append(try await library.open(first.id, as: TextDocument.self))
        }
        let alphabet = Array("abxyz \n")
        for _ in 0..<steps {
            let device = Int(generator.next() % UInt64(count))
            if generator.next() % 3 == 0 {
                let other = Int(generator.next() % UInt64(count))
                guard other != device else { continue }
                try exchange(libraries[device], libraries[other], first.id)
                try await documents[device].refresh()
                try await documents[other].refresh()
                continue
            }
            let length = await documents[device].model.scalarCount
            // A third of the edits go to the start, where devices meet.
            let position = generator.next() % 3 == 0 ? 0 : Int(generator.next() % UInt64(length + 1))
            if length > 0, generator.next() % 3 == 0 {
                let start = min(position, length - 1)
                let deleted = 1 + Int(generator.next() % UInt64(min(3, length - start)))
                try await documents[device].edit(.delete(at: start, count: deleted))
            } else {
                let run = String(
                    (0..<(1 + Int(generator.next() % 3))).map { _ in
                        alphabet[Int(generator.next() % UInt64(alphabet.count))]
                    })
                try await documents[device].edit(.insert(at: position, text: run))
            }
        }
        // Everyone syncs with everyone until nothing new is made.
        for _ in 0..<6 {
            for a in 0..<count {
                for b in 0..<count where a != b {
                    try exchange(libraries[a], libraries[b], first.id)
                    try await documents[a].refresh()
                    try await documents[b].refresh()
                }
            }
        }
        var texts: [String] = []
        for document in documents { texts.append(await document.model.text) }
        for document in documents { try await document.close() }
        let head = try #require(try libraries[0].store.heads(of: first.id).first)
        let merges = try libraries[0].store.changes(of: first.id, since: VersionVector()).filter {
            if case .resolution(let resolution) = $0.kind {
                resolution.strategy == .merge && resolution.contents == nil
            } else {
                false
            }
        }
        return (texts, try referenceText(of: first.id, at: head, in: libraries[0].store), merges.count)
    }

    /// The reference CRDT's text at `head`: every change of the log an event whose parents are its content parents
    /// (a `merge` without contents: the versions it kept; another resolution without contents made on several
    /// parents: all of them, keeping its primary parent's text; any other change: its primary parent), with its text
    /// edits (a baseline or a resolution with contents: the replacement of the text).
    private func referenceText(of document: DocumentID, at head: Change, in store: ChangeLogStore) throws -> String {
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
        return reference.text(atVersionOf: [index[head.hash]!])
    }
}
