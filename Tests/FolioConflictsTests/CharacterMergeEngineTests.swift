import FolioConflicts
import FolioCore
import FolioMerge
import FolioTestDoubles
import FolioTestWorkPool
import Foundation
import Testing

/// The engine's `merge` settlement for a model that merges character by character (`CharacterMergeable`), on a
/// history that computes such merges from its graph.
@Suite(.workPool) struct CharacterMergeEngineTests {
    /// Two devices' edits of one base, delivered to an observer that does not settle.
    static func conflict() -> (observer: Observer<Line>, iPad: Change, mac: Change) {
        var iPad = Fixture.writer(Fixture.iPad)
        var mac = Fixture.writer(Fixture.mac)
        let create = iPad.make(
            .lifecycle(.create(name: "Line", type: Line.documentType.identifier, container: .shared)), on: [], at: 1)
        let base = iPad.edit([Line.Operation.append("a")], of: Line.self, on: [create], at: 2)
        let onIPad = iPad.edit([Line.Operation.append("b")], of: Line.self, on: [base], at: 10)
        let onMac = mac.edit([Line.Operation.append("c")], of: Line.self, on: [base], at: 20)
        var observer = Observer<Line>(
            document: Fixture.document, device: Fixture.receiver, policy: ConflictPolicy(default: .merge),
            settles: false, devices: Fixture.devices)
        for change in [create, base, onIPad, onMac] { observer.deliver(change) }
        return (observer, onIPad, onMac)
    }

    /// A model with nothing beside its text merges from the graph alone: the common ancestor's state, which only
    /// `otherPartsDiverge` of a model with other parts reads, is not replayed for it.
    @Test func aTextOnlyMergeReadsNoAncestorState() {
        let (observer, iPad, mac) = Self.conflict()
        let history = GraphHistory(log: observer.log)
        guard case .settle(let settlement)? = observer.engine.settlementByMerging(in: history) else {
            Issue.record("no settlement")
            return
        }
        #expect(settlement.resolution.contents == nil)
        #expect(Set(settlement.resolution.chosen) == [iPad.hash, mac.hash])
        #expect(history.stateReads.value == 0, "the ancestor's state was replayed")
    }

    /// A merge without contents made the merged text: it is as new as its own change, not as old as the first
    /// version it names. Against a settlement that kept one version, the merge made later is the version kept.
    @Test func aCharacterMergeIsItsOwnOrigin() {
        let (observer, iPad, mac) = Self.conflict()
        var phone = Fixture.writer(Fixture.phone)
        var writer = Fixture.writer(Fixture.receiver)
        // The phone merged both edits last; the receiver kept the Mac's edit (the later one) before. The receiver's
        // head is the one every device shows, so it would also win a tie.
        let merge = phone.make(
            .resolution(Resolution(strategy: .merge, chosen: [iPad.hash, mac.hash], discarded: [], contents: nil)),
            on: [iPad, mac], at: 40)
        let kept = writer.make(
            .resolution(Resolution(strategy: .userChoice, chosen: [mac.hash], discarded: [iPad.hash])),
            on: [iPad, mac], at: 30)
        var settled = observer
        let history = GraphHistory(log: settled.log)
        for change in [merge, kept] {
            settled.log.receive(change)
            history.log = settled.log
        }
        var states: [ChangeHash: Line] = [:]
        states[merge.hash] = Line(text: "abc")
        states[kept.hash] = settled.log.state(at: kept)
        let split = settled.log.primaryParentRule.contentHeads(among: settled.log.heads)
        settled.engine.observe(split, states: states, shown: split.winner!.hash)
        #expect(settled.engine.versions.count == 2)
        #expect(settled.engine.differOnlyInSettlement(in: history))
        #expect(settled.engine.latestVersion(in: history).head.hash == merge.hash)
    }
}

/// A one-line text that merges character by character; it has nothing beside its text.
struct Line: CharacterMergeable, Hashable {
    enum Operation: DocumentOperation {
        case append(String)

        func encode(into writer: inout BinaryWriter) {
            switch self {
            case .append(let text): writer.write(string: text)
            }
        }

        init(from reader: inout BinaryReader) throws {
            self = .append(try reader.readString("text", limit: 1 << 16))
        }
    }

    static let documentType = DocumentType(identifier: "test.line", fileExtensions: ["line"], isPackage: false)

    var text = ""

    init() {}

    init(text: String) { self.text = text }

    init(contents: DocumentContents) throws(ModelError) {
        guard case .data(let data) = contents, let text = String(data: data, encoding: .utf8) else {
            throw ModelError(.invalidContents, "not a line")
        }
        self.text = text
    }

    func contents() -> DocumentContents { .data(Data(text.utf8)) }

    mutating func apply(_ operation: Operation) throws(ModelError) -> Operation {
        switch operation {
        case .append(let more):
            text += more
            return .append("")
        }
    }

    static func merge(base: Line, versions: [Line]) -> MergeResult<Line> {
        MergeResult(merged: versions[0], conflicts: [])
    }

    var mergeableText: [Unicode.Scalar] { Array(text.unicodeScalars) }

    func replacingMergeableText(with text: String) -> Line { Line(text: text) }

    static var hasPartsBesideText: Bool { false }

    static func textEdits(of operation: Operation) -> [TextEdit]? {
        switch operation {
        case .append(let text): [.append(scalars: Array(text.unicodeScalars))]
        }
    }
}

/// A history that merges character by character (every version's text, in order, stands in for the graph's
/// merge) and counts the states it replays.
final class GraphHistory: ConflictHistory, @unchecked Sendable {
    typealias Failure = Never

    var log: MemoryLog<Line>
    let stateReads = Counter()

    init(log: MemoryLog<Line>) {
        self.log = log
    }

    final class Counter: @unchecked Sendable {
        var value = 0
    }

    var document: DocumentID { log.document }

    func change(_ hash: ChangeHash) -> Change? { log.change(hash) }

    func change(_ id: ChangeID) -> Change? { log.change(id) }

    func state(at change: Change) -> Line {
        stateReads.value += 1
        return log.state(at: change)
    }

    func characterMerge(of heads: [Change]) -> MergeResult<Line>? {
        MergeResult(merged: Line(text: heads.map { log.state(at: $0).text }.joined()), conflicts: [])
    }
}
