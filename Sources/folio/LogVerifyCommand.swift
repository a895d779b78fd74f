import ArgumentParser
import FolioCore
import FolioStore
import Foundation

/// `folio log verify`: re-hash and check every change of a store; exit 1 when anything is wrong.
struct LogVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a store: every change re-hashed, parents, vectors, frontier, blobs. Exit 1 if unsound.")

    @OptionGroup var file: StoreCopyArgument

    func run() async throws {
        let report = try file.withCopy { try $0.verify() }
        for problem in report.problems { printEscaped("problem: \(problem)") }
        printEscaped("\(report)")
        if !report.isSound {
            throw CommandFailure.checkFailed("\(file.store) is unsound; first problem: \(report.firstProblem!)")
        }
    }
}
