import ArgumentParser
import FolioCore
import FolioFiles
import FolioStore
import Foundation

/// `folio log exercise`: three devices edit one document apart and exchange their changes out of order; every store
/// must end with the same vector and heads, and verify as sound.
struct LogExerciseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration.testDriver(
        commandName: "exercise",
        abstract: "Three devices edit a document offline and sync out of order; check that their logs converge.")

    @Option(name: .long, help: "Where to create the stores (default: a new temporary directory).")
    var directory: String?

    @Option(name: .long, help: "Edits each device makes while offline, \(CountBounds.written(CountBounds.edits)).")
    var edits = 3

    func validate() throws {
        try CountBounds.check(edits, of: "--edits", within: CountBounds.edits)
    }

    func run() async throws {
        let root = try makeDirectory()
        print("stores in \(root.path)")
        let clock = ManualClock(start: Timestamp(millisecondsSince1970: 1_767_225_600_000))
        let document = DocumentID(using: SeededIdentifierSource(seed: 42))
        let names = ["iPad", "Mac", "Phone"]
        let stores = try names.map { name in
            try openStore(
                at: root.appendingPathComponent("\(name).sqlite").path,
                deviceNamed: name, clock: clock)
        }

        try stores[0].append(
            .lifecycle(.create(name: "Notes", type: "public.plain-text", container: .shared)), to: document)
        try deliver(from: stores[0], to: Array(stores[1...]), document: document, scrambled: false)
        print("iPad created the document; everyone has \(try stores[0].vector(of: document))")

        for (store, name) in zip(stores, names) {
            for index in 1...edits {
                clock.advance(byMilliseconds: 1000)
                try store.append(.edit(Edit(operations: Data("\(name) edit \(index)".utf8))), to: document)
            }
        }
        print("each device made \(edits) edits offline")

        for source in stores {
            try deliver(from: source, to: stores.filter { $0 !== source }, document: document, scrambled: true)
        }
        print("changes delivered in reverse order, each twice")

        var failures: [String] = []
        for (store, name) in zip(stores, names) {
            let heads = try store.heads(of: document)
            let report = try store.verify()
            print("\(name.padding(toLength: 6, withPad: " ", startingAt: 0)) vector \(try store.vector(of: document))")
            let headNames = heads.map { head in
                "\(names.first { deviceKey(named: $0).id == head.id.device } ?? "?")#\(head.id.seq)"
            }
            print(
                "       heads [\(headNames.joined(separator: ", "))], waiting \(try store.pendingChanges(of: document).count), \(report)"
            )
            if !report.isSound { failures.append("\(name): \(report)") }
        }
        let vectors = try Set(stores.map { try $0.vector(of: document) })
        let heads = try Set(stores.map { try $0.heads(of: document).map(\.hash) })
        if vectors.count != 1 || heads.count != 1 { failures.append("the devices did not converge") }
        guard failures.isEmpty else { throw CommandFailure.checkFailed(failures.joined(separator: "; ")) }
        print(
            "converged: \(names.count) devices, \(try stores[0].changeCount()) changes each, \(try stores[0].heads(of: document).count) concurrent heads"
        )
    }

    private func makeDirectory() throws -> URL {
        let url =
            directory.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("folio-exercise-\(UUID().uuidString)")
        try PosixFileSystem().createDirectories(at: url)
        return url
    }

    /// Sends `source`'s changes that each target lacks, optionally in reverse causal order and twice.
    private func deliver(
        from source: ChangeLogStore, to targets: [ChangeLogStore], document: DocumentID, scrambled: Bool
    ) throws {
        for target in targets {
            let missing = try source.changes(of: document, since: target.vector(of: document))
            let heads = try source.signedHeads(of: document)
            if scrambled {
                for change in missing.reversed() { try target.ingest([change], heads: heads) }
                try target.ingest(missing, heads: heads)
            } else {
                try target.ingest(missing, heads: heads)
            }
        }
    }
}
