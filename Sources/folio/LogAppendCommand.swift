import ArgumentParser
import FolioCore
import FolioStore
import Foundation

/// `folio log append`: append local edits to a document, printing each change once it is committed.
///
/// Crash tests run it and kill it at random moments: every change it printed must survive.
struct LogAppendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration.testDriver(
        commandName: "append",
        abstract: "Append edits to a document's log, printing each change id once committed.")

    @OptionGroup var log: LogDriverOptions<Self>

    @Option(
        name: .long,
        help: "How many changes to append, \(CountBounds.written(CountBounds.appendCount)); 0 appends until killed.")
    var count = 100

    @Option(name: .long, help: "Changes per transaction, \(CountBounds.written(CountBounds.batch)).")
    var batch = 1

    @Option(name: .long, help: "Durability: normal or full.")
    var durability = "normal"

    func validate() throws {
        try CountBounds.check(count, of: "--count", within: CountBounds.appendCount, note: " (0: until killed)")
        try CountBounds.check(batch, of: "--batch", within: CountBounds.batch)
        guard ["normal", "full"].contains(durability) else {
            throw ValidationError("--durability must be normal or full, not '\(durability)'")
        }
    }

    func run() async throws {
        let store = try log.openStore(durability: durability == "full" ? .full : .normal)
        let documentID = log.documentID
        var appended = 0
        while count == 0 || appended < count {
            let size = count == 0 ? batch : min(batch, count - appended)
            let kinds = (0..<size).map { index in
                ChangeKind.edit(Edit(operations: Data("edit \(appended + index)".utf8)))
            }
            let changes = try store.append(kinds, to: documentID)
            for change in changes { printFlushed("\(change.id.device) \(change.id.seq)") }
            appended += size
        }
    }
}

extension LogAppendCommand: LogDriverHelp {
    static var deviceHelp: ArgumentHelp { "The device name to append as (its identity derives from the name)." }
    static var documentHelp: ArgumentHelp { "The document's UUID." }
    static var documentExample: String { " such as 00000000-0000-4000-8000-000000000001" }
}
