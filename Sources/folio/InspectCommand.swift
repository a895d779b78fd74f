import ArgumentParser
import FolioFiles
import FolioReports
import Foundation

/// `folio inspect DIR`: the conflict-inspection report of a library directory.
struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print the conflict-inspection report of a library directory (Markdown by default).",
        discussion: """
            The library is not modified: a temporary copy of it is inspected. Documents are opened without \
            resolving anything: open conflicts are shown, not settled. Exit 1 when a conflict is open, 2 when DIR \
            is not a library.
            """)

    @Argument(help: "The library directory (the one holding .folio/store.sqlite).")
    var directory: String

    @Option(help: "The report's format.")
    var report: ReportFormat = .md

    @Option(help: "Write the report to this file instead of standard output.")
    var out: String?

    func run() async throws {
        let fileSystem = PosixFileSystem()
        let url = URL(fileURLWithPath: directory, isDirectory: true)
        guard (try? fileSystem.itemKind(at: url.appendingPathComponent(".folio/store.sqlite"))) ?? .absent != .absent
        else {
            throw CommandFailure.invalidInput("\(directory) is not a Folio library: it has no .folio/store.sqlite")
        }
        var value: ConflictReport
        do {
            value = try await ConflictReport.inspect(libraryAt: url, fileSystem: fileSystem)
        } catch {
            throw CommandFailure.invalidInput("cannot inspect \(directory): \(error)")
        }
        value.source = directory
        let text = ReportOutput.render(value, as: report)
        if let out {
            try ReportOutput.write(text, toFileAt: out, fileSystem: fileSystem)
        } else {
            // The report quotes the library's names and contents: on a terminal, escaped (a file gets it as is).
            print(TerminalText.escaped(text, keepingLines: true), terminator: "")
        }
        if value.needsAttention {
            throw CommandFailure(message: "\(directory) has an open conflict or an unsound store", exitCode: 1)
        }
    }
}
