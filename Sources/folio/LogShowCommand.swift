import ArgumentParser
import FolioCore
import FolioStore
import Foundation

/// `folio log show`: the documents of a store with their vectors, heads and waiting changes.
struct LogShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print each document's vector, heads and waiting changes, or a document's contents at a version.",
        discussion: """
            With --document NAME --at VERSION, print that document's contents at one of its versions instead: \
            VERSION is a number from `folio log history`, the start of a version's hash (6 hex digits or more), \
            or an ISO 8601 time (the newest version at or before it). A flat file prints as its text, a package \
            as its members.
            """)

    @OptionGroup var file: StoreCopyArgument

    @Option(help: "With --at: the document's display name.")
    var document: String?

    @Option(help: "With --document: the version to print (number, hash prefix or ISO 8601 time).")
    var at: String?

    func validate() throws {
        guard (document == nil) == (at == nil) else {
            throw ValidationError("--document and --at go together")
        }
    }

    func run() async throws {
        if let document, let at {
            try await DocumentHistoryAccess.withDocument(named: document, inStoreAt: file.store) { opened, _ in
                let version = try DocumentHistoryAccess.version(at, in: try await opened.history())
                for line in try await opened.printableContents(at: version) {
                    print(TerminalText.escaped(line, keepingLines: true))
                }
            }
            return
        }
        try file.withCopy { log in
            let names = Dictionary(
                try log.devices.all().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
            for document in try log.documents() {
                // Device names come from the store (and from peers before it): escaped, as everything printed from
                // it.
                printEscaped("document \(document)")
                printEscaped("  vector  \(describe(try log.vector(of: document), names: names))")
                for head in try log.heads(of: document) {
                    let name = names[head.id.device].map { $0.isEmpty ? "" : " (\($0))" } ?? ""
                    printEscaped(
                        "  head    \(head.id)\(name) lamport \(head.lamport) at \(head.wallTime) \(head.hash.shortHex)")
                }
                let pending = try log.pendingChanges(of: document)
                if !pending.isEmpty {
                    printEscaped("  waiting \(pending.map(\.id.description).joined(separator: ", "))")
                }
            }
        }
    }
}
