import ArgumentParser
import FolioCore
import FolioStore
import Foundation

/// `folio log show`: the documents of a store with their vectors, heads and waiting changes.
struct LogShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print each document's vector, heads and waiting changes.")

    @OptionGroup var file: StoreCopyArgument

    func run() async throws {
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
