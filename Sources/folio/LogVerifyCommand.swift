import ArgumentParser
import FolioCore
import FolioStore
import Foundation

/// `folio log verify`: re-hash and check every change of a store; exit 1 when anything is wrong.
struct LogVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a store: every change re-hashed, parents, vectors, frontier, blobs. Exit 1 if unsound.")

    @Argument(help: "The store file (only read: a temporary copy of it is opened).")
    var store: String

    func validate() throws {
        guard FileManager.default.fileExists(atPath: store) else { throw ValidationError("no file at \(store)") }
    }

    func run() async throws {
        let copy = try StoreCopy(of: store)
        defer { copy.remove() }
        let report = try copy.store.verify()
        for problem in report.problems { printEscaped("problem: \(problem)") }
        printEscaped("\(report)")
        if !report.isSound { throw CommandFailure.checkFailed("\(store) is unsound; first problem: \(report.firstProblem!)") }
    }
}
