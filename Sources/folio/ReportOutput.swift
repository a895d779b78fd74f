import ArgumentParser
import FolioFiles
import FolioReports
import Foundation

/// A report format on the command line.
enum ReportFormat: String, ExpressibleByArgument, CaseIterable {
    case md, html, json
}

/// Writing reports to files.
enum ReportOutput {
    /// The report's text in `format`.
    static func render(_ report: ConflictReport, as format: ReportFormat) -> String {
        switch format {
        case .md: report.markdown()
        case .html: report.html()
        case .json: report.json()
        }
    }

    /// Writes `report` as `DIR/NAME.FORMAT` (NAME may hold subdirectories, which are created) through `fileSystem`,
    /// whole or not at all.
    static func write(
        _ report: ConflictReport, as format: ReportFormat, named name: String, into directory: String,
        fileSystem: any FileSystem
    ) throws {
        let url = URL(fileURLWithPath: directory, isDirectory: true).appendingPathComponent(
            "\(name).\(format.rawValue)")
        do {
            try CommandFiles.write(
                Data(render(report, as: format).utf8), to: url, makingDirectories: true, on: fileSystem)
        } catch {
            throw CommandFailure.invalidInput("cannot write \(url.path): \(CommandFiles.reason(error))")
        }
    }

    /// Writes `text` as the file at `path` (whose directory must exist) through `fileSystem`, whole or not at all.
    static func write(_ text: String, toFileAt path: String, fileSystem: any FileSystem) throws {
        do {
            try CommandFiles.write(
                Data(text.utf8), to: URL(fileURLWithPath: path, isDirectory: false), makingDirectories: false,
                on: fileSystem)
        } catch {
            throw CommandFailure.invalidInput("cannot write \(path): \(CommandFiles.reason(error))")
        }
    }
}
