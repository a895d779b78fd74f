import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioTesting
import Foundation

/// One text document shared by several devices, each with its own library, edited offline and synced by hand: a
/// device ingests what another has and it lacks, as a sync would, so a test decides exactly what each device has
/// seen and in which order.
struct SharedText {
    let fixtures: [LibraryFixture]
    let libraries: [DocumentLibrary]
    let documents: [Document<TextDocument>]
    let id: DocumentID
    /// The changes every device had when the document was shared: its creation and baseline.
    let base: [Change]

    /// Creates "Notes" holding `text` on device 0, shares it with the others and opens it everywhere.
    ///
    /// Device `i` is `LibraryFixture(seed: i + 1)`, so runs with the same arguments make the same identities.
    /// `skews[i]`, when given, moves device `i`'s clock by that many milliseconds before anything happens.
    static func make(devices: Int, text: String = "base\n", skews: [Int64] = []) async throws -> SharedText {
        let fixtures = try (0..<devices).map { try LibraryFixture(seed: UInt64($0 + 1)) }
        for (fixture, skew) in zip(fixtures, skews) { fixture.clock.advance(byMilliseconds: skew) }
        let libraries = try fixtures.map { try $0.library(autosave: .manual) }
        let first = try await libraries[0].create(
            TextDocument.self, named: "Notes", in: .shared, contents: TextDocument(text: text))
        let base = try libraries[0].store.changes(of: first.id)
        var documents = [first]
        for library in libraries.dropFirst() {
            try library.store.ingest(trusting: base)
            documents.append(try await library.open(first.id, as: TextDocument.self))
        }
        return SharedText(fixtures: fixtures, libraries: libraries, documents: documents, id: first.id, base: base)
    }

    var count: Int { documents.count }

    /// A library that holds only the shared document's creation and baseline, closed: ``receiver(from:)`` copies
    /// it, which is much cheaper than creating a store.
    func receiverTemplate() throws -> LibraryFixture {
        let template = try LibraryFixture(seed: 1_000)
        let library = try template.library(autosave: .manual)
        try library.store.ingest(trusting: base)
        try library.store.close()
        return template
    }

    /// A fresh library of a device that only has the shared document's beginning, copied from `template`.
    static func receiver(from template: LibraryFixture) throws -> (LibraryFixture, DocumentLibrary) {
        let fixture = try LibraryFixture(seed: 1_000)
        let store = template.root.appendingPathComponent(".folio", isDirectory: true)
        for name in Disk.names(in: store) {
            try FileManager.default.copyItem(
                at: store.appendingPathComponent(name), to: fixture.root.appendingPathComponent(".folio/\(name)"))
        }
        return (fixture, try fixture.library(autosave: .manual))
    }

    /// Device `device`'s log of the document.
    func log(_ device: Int) throws -> [Change] {
        try libraries[device].store.changes(of: id)
    }

    /// Every change any device has, once each, in causal order.
    func allChanges() throws -> [Change] {
        var byHash: [ChangeHash: Change] = [:]
        for library in libraries {
            for change in try library.store.changes(of: id) { byHash[change.hash] = change }
        }
        return byHash.values.sorted { ($0.lamport, $0.id) < ($1.lamport, $1.id) }
    }

    /// The changes `from` has and `to` lacks (by `to`'s vector; its waiting changes are sent again).
    func missing(from: Int, to: Int) throws -> [Change] {
        try libraries[from].store.changes(of: id, since: libraries[to].store.vector(of: id))
    }

    /// Every device ingests everything every other has, then refreshes its document.
    func syncAll() async throws {
        let all = try allChanges()
        for library in libraries {
            try library.store.ingest(trusting: all)
        }
        try await refreshAll()
    }

    func refreshAll() async throws {
        for document in documents { try await document.refresh() }
    }

    /// Applies a step of a random history.
    func apply(_ step: HistoryStep) async throws {
        switch step {
        case .edit(let device, let edit, let after):
            fixtures[device].clock.advance(byMilliseconds: after)
            let document = documents[device]
            let length = await document.model.text.unicodeScalars.count
            switch edit {
            case .append(let text):
                try await document.edit(.append(text))
            case .insert(let position, let text):
                try await document.edit(.insert(at: Int(position % UInt64(length + 1)), text: text))
            }
        case .send(let from, let to, let pick):
            var random = SplitMix64(seed: pick)
            let everything = pick % 2 == 0
            let chosen = try missing(from: from, to: to).filter { _ in everything || Bool.random(using: &random) }
                .shuffled(using: &random)
            // One call each, so the order matters: a change that arrives early waits for its past.
            for change in chosen { try libraries[to].store.ingest(trusting: [change]) }
        case .refresh(let device):
            try await documents[device].refresh()
        case .resolve(let device, let index):
            let document = documents[device]
            try await document.refresh()
            let versions = try await document.versions()
            guard versions.count > 1 else { return }
            try await document.replace(with: versions[index % versions.count])
        }
    }

    /// What device `device`'s document shows of its versions.
    func snapshot(_ device: Int) async throws -> VersionSnapshot {
        try await VersionSnapshot(documents[device])
    }
}

/// What a document shows of its versions, to compare across devices and delivery orders.
struct VersionSnapshot: Equatable, CustomStringConvertible {
    var versions: [ChangeHash]
    var current: ChangeHash
    var unresolved: [ChangeHash]
    var texts: [String]
    var modelText: String
    var inConflict: Bool

    init(_ document: Document<TextDocument>) async throws {
        let all = try await document.versions()
        versions = all.map(\.id)
        texts = all.map(\.contents.text)
        current = try await document.currentVersion().id
        unresolved = try await document.unresolvedConflictVersions().map(\.id)
        modelText = await document.model.text
        inConflict = await document.state.contains(.inConflict)
    }

    var description: String {
        let listed = zip(versions, texts).map { "\($0.shortHex) \($1.debugDescription)" }.joined(separator: ", ")
        return "versions [\(listed)], current \(current.shortHex), unresolved \(unresolved.map(\.shortHex)), "
            + "model \(modelText.debugDescription)\(inConflict ? ", in conflict" : "")"
    }
}

/// How an edit of a random history changes the text.
enum TextEdit: Hashable, Sendable {
    case append(String)
    /// Inserts at `position % (length + 1)` of the text the device shows then.
    case insert(position: UInt64, String)
}

/// One step of a random history of a ``SharedText``.
enum HistoryStep: Hashable, Sendable, CustomStringConvertible {
    /// An edit on `device`, after its clock moves on by `after` milliseconds.
    case edit(device: Int, TextEdit, after: Int64)
    /// `to` receives what `from` has and it lacks (for an odd `pick`, about half of it), one change at a time in an
    /// order shuffled by `pick`; it does not refresh.
    case send(from: Int, to: Int, pick: UInt64)
    /// `device` refreshes its document.
    case refresh(device: Int)
    /// `device` refreshes and, when in conflict, keeps version `index % count` (0 is the current one).
    case resolve(device: Int, index: Int)

    var description: String {
        switch self {
        case .edit(let device, .append(let text), let after): "\(device): +\(after)ms append \(text.debugDescription)"
        case .edit(let device, .insert(let position, let text), let after):
            "\(device): +\(after)ms insert \(text.debugDescription) at ~\(position % 64)"
        case .send(let from, let to, let pick): "\(from) -> \(to)\(pick % 2 == 0 ? "" : " (partial)")"
        case .refresh(let device): "\(device): refresh"
        case .resolve(let device, let index): "\(device): resolve keeping #\(index)"
        }
    }

    /// A random history of `count` steps over `devices` devices: mostly edits (appends, inserts when `inserts`),
    /// sends and refreshes, and resolutions when `resolutions` (sometimes two devices exchange everything and
    /// settle the same way at once).
    static func randomHistory(
        devices: Int, count: Int, inserts: Bool = true, resolutions: Bool = false, using random: inout SplitMix64
    ) -> [HistoryStep] {
        var edits = Array(repeating: 0, count: devices)
        var steps: [HistoryStep] = []
        for _ in 0..<count {
            let device = random.int(in: 0...(devices - 1))
            switch random.int(in: 0...9) {
            case 0...5:
                edits[device] += 1
                let text = token(device: device, edit: edits[device])
                let after = Int64(random.int(in: 0...20)) * 1_000
                let edit: TextEdit =
                    inserts && Bool.random(using: &random) ? .insert(position: random.next(), text) : .append(text)
                steps.append(.edit(device: device, edit, after: after))
            case 6, 7:
                let other = (device + random.int(in: 1...(devices - 1))) % devices
                steps.append(.send(from: other, to: device, pick: random.next()))
            case 8:
                steps.append(.refresh(device: device))
            default:
                guard resolutions else {
                    steps.append(.refresh(device: device))
                    continue
                }
                let index = random.int(in: 0...3)
                if Bool.random(using: &random) {
                    steps.append(.resolve(device: device, index: index))
                } else {
                    // Two devices that have the same changes settle them the same way at once: equal versions.
                    let other = (device + random.int(in: 1...(devices - 1))) % devices
                    steps += [
                        .send(from: device, to: other, pick: random.next() & ~1),
                        .send(from: other, to: device, pick: random.next() & ~1),
                        .resolve(device: device, index: index), .resolve(device: other, index: index),
                    ]
                }
            }
        }
        return steps
    }

    /// A short text naming the device and the edit, with a non-ASCII scalar now and then (positions are in scalars).
    static func token(device: Int, edit: Int) -> String {
        let letter = String(UnicodeScalar(UInt8(ascii: "a") + UInt8(device)))
        return "\(letter)\(edit)\(edit % 3 == 0 ? "é" : "");"
    }
}

/// Every ordering of `items` (n! of them: keep n small).
func permutations<T>(of items: [T]) -> [[T]] {
    guard items.count > 1 else { return [items] }
    var result: [[T]] = []
    for (index, first) in items.enumerated() {
        var rest = items
        rest.remove(at: index)
        for tail in permutations(of: rest) { result.append([first] + tail) }
    }
    return result
}
