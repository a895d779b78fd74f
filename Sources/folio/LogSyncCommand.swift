import ArgumentParser
import FolioCore
import FolioStore
import FolioSync
import Foundation

/// `folio log sync`: sync a store through a shared folder, optionally appending between rounds; two processes
/// running it at once on two stores and one folder must end with the same logs.
struct LogSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Sync a store through a shared folder (FolderTransport), appending edits between rounds if asked.",
        // A driver for Folio's own tests (kills, two processes on one folder), not a command for users: hidden.
        shouldDisplay: false)

    @Option(name: .long, help: "The store file (created if absent).")
    var store: String

    @Option(name: .long, help: "The shared folder (created if absent).")
    var folder: String

    @Option(name: .long, help: "The device name (its identity derives from the name).")
    var device = "cli"

    @Option(name: .long, help: "The document's UUID that appended edits go to.")
    var document = "00000000-0000-4000-8000-000000000001"

    @Option(name: .long, help: "How many rounds of append-then-sync.")
    var rounds = 1

    @Option(name: .long, help: "Edits appended before each round's sync.")
    var append = 0

    func validate() throws {
        guard UUIDBytes(document) != nil else { throw ValidationError("--document must be a UUID, not '\(document)'") }
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1, not \(rounds)") }
        guard append >= 0 else { throw ValidationError("--append must not be negative, not \(append)") }
    }

    func run() async throws {
        let log = try openStore(at: store, deviceNamed: device)
        let transport = FolderTransport(root: URL(fileURLWithPath: folder, isDirectory: true))
        let documentID = DocumentID(UUIDBytes(document)!)
        var received = 0, sent = 0
        for round in 0..<rounds {
            if append > 0 {
                _ = try log.append((0..<append).map { ChangeKind.edit(Edit(operations: Data("\(device) \(round).\($0)".utf8))) }, to: documentID)
            }
            do {
                let report = try transport.sync(log)
                received += report.changesApplied
                sent += report.changesSent
                for problem in report.problems { printEscaped("problem: \(problem)") }
            } catch {
                throw CommandFailure.checkFailed("sync through \(folder) failed: \(error)")
            }
        }
        let names = Dictionary(try log.devices().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let vector = describe(try log.vector(of: documentID), names: names)
        printEscaped("\(device): \(rounds) round\(rounds == 1 ? "" : "s"), sent \(sent), received \(received), vector \(vector)")
    }
}
