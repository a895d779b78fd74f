import ArgumentParser
import FolioCore
import FolioStore
import FolioSync
import Foundation

/// `folio log sync`: sync a store through a shared folder, optionally appending between rounds; two processes
/// running it at once on two stores and one folder must end with the same logs.
struct LogSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration.testDriver(
        commandName: "sync",
        abstract: "Sync a store through a shared folder (FolderTransport), appending edits between rounds if asked.")

    @OptionGroup var log: LogDriverOptions<Self>

    @Option(name: .long, help: "The shared folder (created if absent).")
    var folder: String

    @Option(name: .long, help: "How many rounds of append-then-sync, \(CountBounds.written(CountBounds.rounds)).")
    var rounds = 1

    @Option(
        name: .long,
        help: "Edits appended before each round's sync, \(CountBounds.written(CountBounds.appendPerRound)).")
    var append = 0

    func validate() throws {
        try CountBounds.check(rounds, of: "--rounds", within: CountBounds.rounds)
        try CountBounds.check(append, of: "--append", within: CountBounds.appendPerRound)
    }

    func run() async throws {
        let store = try log.openStore()
        let transport = FolderTransport(root: URL(fileURLWithPath: folder, isDirectory: true))
        let documentID = log.documentID
        var received = 0
        var sent = 0
        for round in 0..<rounds {
            if append > 0 {
                _ = try store.append(
                    (0..<append).map { ChangeKind.edit(Edit(operations: Data("\(log.device) \(round).\($0)".utf8))) },
                    to: documentID)
            }
            do {
                let report = try transport.sync(store)
                received += report.changesApplied
                sent += report.changesSent
                for problem in report.problems { printEscaped("problem: \(problem)") }
            } catch {
                throw CommandFailure.checkFailed("sync through \(folder) failed: \(error)")
            }
        }
        let names = Dictionary(
            try store.devices.all().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let vector = describe(try store.vector(of: documentID), names: names)
        printEscaped(
            "\(log.device): \(rounds) round\(rounds == 1 ? "" : "s"), sent \(sent), received \(received), vector \(vector)"
        )
    }
}

extension LogSyncCommand: LogDriverHelp {
    static var deviceHelp: ArgumentHelp { "The device name (its identity derives from the name)." }
    static var documentHelp: ArgumentHelp { "The document's UUID that appended edits go to." }
    static var documentExample: String { "" }
}
