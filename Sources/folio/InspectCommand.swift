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
            resolving anything: open conflicts are shown, not settled. Exit 1 when a conflict is open or the store \
            fails verification (standard error says which, in which document, and with the first problem of a \
            store, which change and check), 2 when DIR is not a library.
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
            throw CommandFailure.checkFailed(Self.attention(in: value, at: directory))
        }
    }

    /// How many open conflicts the message names before counting the rest.
    static let namedConflicts = 10

    /// What needs attention in the library at `directory`, one line each: the store's verification with its first
    /// problem (the document and change it is in), then each open conflict with its document and the devices whose
    /// versions compete.
    static func attention(in report: ConflictReport, at directory: String) -> String {
        var lines: [String] = []
        if let outcome = report.outcome, !outcome.passed {
            let count = outcome.failures.count
            let first = outcome.failures.first.map { located($0.message, in: report) } ?? "no problem recorded"
            lines.append(
                "\(directory): the store failed verification: \(count) problem\(count == 1 ? "" : "s"); "
                    + "the first: \(first)")
        }
        let open = report.documents.flatMap { document in
            document.conflicts.filter { $0.status == .open }.map { (document, $0) }
        }
        for (document, conflict) in open.prefix(namedConflicts) {
            // Names come from peers: escaped one by one, so none can start a line of its own.
            let devices = conflict.versions.map { TerminalText.escaped($0.device) }
            lines.append(
                "\(directory): \(TerminalText.escaped(document.name)) has an open conflict (\(conflict.id)) between the versions of "
                    + "\(devices.dropLast().joined(separator: ", "))\(devices.count > 1 ? " and " : "")"
                    + "\(devices.last ?? "")")
        }
        if open.count > namedConflicts {
            lines.append("\(directory): and \(open.count - namedConflicts) more open conflicts")
        }
        return lines.joined(separator: "\n")
    }

    /// A verification problem (`document ID change DEVICE#SEQ: message`) with the names the report gives its
    /// document and device: `document ID (Notes) change DEVICE#SEQ (iPad): message`.
    static func located(_ message: String, in report: ConflictReport) -> String {
        var text = message
        for document in report.documents {
            let place = "document \(document.id) "
            if text.hasPrefix(place) {
                text = "document \(document.id) (\(TerminalText.escaped(document.name))) " + text.dropFirst(place.count)
                break
            }
        }
        for device in report.devices {
            guard let start = text.range(of: "change \(device.id)#") else { continue }
            let digits = text[start.upperBound...].prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty else { continue }
            text.insert(contentsOf: " (\(TerminalText.escaped(device.name)))", at: digits.endIndex)
            break
        }
        return text
    }
}
