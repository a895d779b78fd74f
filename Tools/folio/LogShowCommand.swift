import ArgumentParser
import FolioCore
import FolioStore
import Foundation

/// `folio log show`: the documents of a store with their vectors, heads and waiting changes.
struct LogShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print each document's vector, heads and waiting changes.")

    @Argument(help: "The store file.")
    var store: String

    func validate() throws {
        guard FileManager.default.fileExists(atPath: store) else { throw ValidationError("no file at \(store)") }
    }

    func run() async throws {
        let log = try openStore(at: store, device: Device(id: deviceID(named: "folio-cli"), name: "folio-cli"))
        let names = Dictionary(uniqueKeysWithValues: try log.devices().map { ($0.id, $0.name) })
        for document in try log.documents() {
            print("document \(document)")
            print("  vector  \(try log.vector(of: document))")
            for head in try log.heads(of: document) {
                let name = names[head.id.device].map { $0.isEmpty ? "" : " (\($0))" } ?? ""
                print("  head    \(head.id)\(name) lamport \(head.lamport) at \(head.wallTime) \(head.hash.shortHex)")
            }
            let pending = try log.pendingChanges(of: document)
            if !pending.isEmpty { print("  waiting \(pending.map(\.id.description).joined(separator: ", "))") }
        }
    }
}
