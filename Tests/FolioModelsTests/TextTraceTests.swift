import FolioChildProcess
import FolioCore
import FolioModels
import FolioTestWorkPool
import Foundation
import Testing

/// A recorded editing history (see `Benchmarks/traces/README.md`: from josephg/editing-traces, CC BY 4.0).
struct EditingTrace: Sendable {
    /// One splice: delete `deleted` scalars at `position`, then insert `inserted` there.
    struct Patch: Sendable {
        var position: Int
        var deleted: Int
        var inserted: String
    }

    var startContent: String
    var endContent: String
    var patches: [Patch]

    /// Why a trace could not be read.
    struct LoadError: Error, CustomStringConvertible {
        var description: String
    }

    /// The automerge-paper trace, read once and shared by the tests.
    static let automergePaper: Result<EditingTrace, LoadError> = Result { () throws(LoadError) in
        try load(named: "automerge-paper.json.gz")
    }

    /// `Benchmarks/traces/NAME`, found from this source file's place in the package.
    static func url(named name: String) -> URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // FolioModelsTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // the package
            .appendingPathComponent("Benchmarks/traces/\(name)")
    }

    /// Decompresses with `gzip -dc` and parses the sequential trace format.
    static func load(named name: String) throws(LoadError) -> EditingTrace {
        let path = url(named: name).path
        guard FileManager.default.fileExists(atPath: path) else { throw LoadError(description: "\(path) is missing") }
        // Read as it comes, so a full pipe cannot block gzip.
        let run: ChildProcess.Outcome
        do {
            run = try ChildProcess.run("/usr/bin/env", arguments: ["gzip", "-dc", path], standardError: .inherit)
        } catch {
            throw LoadError(description: "cannot run gzip: \(error)")
        }
        guard run.termination.succeeded else {
            throw LoadError(description: "gzip -dc \(path) ended with \(run.termination)")
        }
        let json = run.output
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: json)
        } catch {
            throw LoadError(description: "\(name) is not JSON: \(error)")
        }
        guard let object = root as? [String: Any], let start = object["startContent"] as? String,
            let end = object["endContent"] as? String, let transactions = object["txns"] as? [[String: Any]]
        else { throw LoadError(description: "\(name) lacks startContent, endContent or txns") }
        var patches: [Patch] = []
        patches.reserveCapacity(transactions.count)
        for (index, transaction) in transactions.enumerated() {
            guard let list = transaction["patches"] as? [[Any]] else {
                throw LoadError(description: "transaction \(index) has no patches")
            }
            for patch in list {
                guard patch.count == 3, let position = (patch[0] as? NSNumber)?.intValue,
                    let deleted = (patch[1] as? NSNumber)?.intValue, let inserted = patch[2] as? String
                else { throw LoadError(description: "transaction \(index) has a malformed patch") }
                patches.append(Patch(position: position, deleted: deleted, inserted: inserted))
            }
        }
        return EditingTrace(startContent: start, endContent: end, patches: patches)
    }

    /// Each patch as text operations: a delete (if it deletes), then an insert (if it inserts).
    func operations(prefix count: Int? = nil) -> [TextDocument.Operation] {
        var operations: [TextDocument.Operation] = []
        operations.reserveCapacity(patches.count)
        for patch in patches.prefix(count ?? patches.count) {
            if patch.deleted > 0 { operations.append(.delete(at: patch.position, count: patch.deleted)) }
            if !patch.inserted.isEmpty { operations.append(.insert(at: patch.position, text: patch.inserted)) }
        }
        return operations
    }

    /// The text after the first `count` patches, replayed on an array of scalars (the trace's own semantics).
    func referenceText(after count: Int) -> String {
        var scalars = Array(startContent.unicodeScalars)
        for patch in patches.prefix(count) {
            scalars.replaceSubrange(
                patch.position..<(patch.position + patch.deleted), with: patch.inserted.unicodeScalars)
        }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }
}

@Suite(.workPool) struct TextTraceTests {
    /// The whole automerge-paper history (259,778 patches) replays to exactly its final text.
    @Test func automergePaperReplaysToItsEndContent() throws {
        let trace = try EditingTrace.automergePaper.get()
        #expect(trace.patches.count == 259_778)
        let operations = trace.operations()
        var document = TextDocument(text: trace.startContent)
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            for operation in operations { _ = try document.apply(operation) }
        }
        print("automerge-paper: \(operations.count) operations applied in \(elapsed)")
        #expect(document.scalarCount == 104_852)
        #expect(document.scalarCount == trace.endContent.unicodeScalars.count)
        #expect(document.text.unicodeScalars.elementsEqual(trace.endContent.unicodeScalars))
    }

    /// The first 20,000 patches, checked against a plain array replay; then undone through their inverses back to the
    /// start, and replayed again with typing bursts combined.
    @Test func automergePaperPrefixUndoesAndCombines() throws {
        let trace = try EditingTrace.automergePaper.get()
        let count = 20_000
        let operations = trace.operations(prefix: count)
        let expected = trace.referenceText(after: count)

        var document = TextDocument(text: trace.startContent)
        var inverses: [TextDocument.Operation] = []
        for operation in operations { inverses.append(try document.apply(operation)) }
        #expect(document.text.unicodeScalars.elementsEqual(expected.unicodeScalars))

        for inverse in inverses.reversed() { _ = try document.apply(inverse) }
        #expect(document == TextDocument(text: trace.startContent))

        var combined: [TextDocument.Operation] = []
        for operation in operations {
            if let last = combined.last, let both = TextDocument.combine(last, operation) {
                combined[combined.count - 1] = both
            } else {
                combined.append(operation)
            }
        }
        print(
            "automerge-paper: the first \(count) patches (\(operations.count) operations) combine into \(combined.count)"
        )
        #expect(combined.count < operations.count / 2)
        var grouped = TextDocument(text: trace.startContent)
        for operation in combined { _ = try grouped.apply(operation) }
        #expect(grouped.text.unicodeScalars.elementsEqual(expected.unicodeScalars))
    }
}
