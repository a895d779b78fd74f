import ArgumentParser
import Foundation

/// `folio`: Folio's command-line tool.
///
/// Exit codes: 0 success, 1 a check failed (a store is unsound, an expectation did not hold), 2 invalid input
/// (bad arguments, a file that is not a Folio store); `replay` and `fuzz` interrupted by SIGINT or SIGTERM remove
/// their run directories and exit 130 or 143.
@main
struct FolioCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "folio",
        abstract: "Folio: document change logs, sync and conflicts for documents edited on several devices.",
        subcommands: simulatorCommands + [InspectCommand.self, LogCommand.self, ServeCommand.self]
    )

    /// `replay` and `fuzz`, in a build with the `Simulator` trait (the default); none in a server's build.
    #if Simulator
        static let simulatorCommands: [any ParsableCommand.Type] = [ReplayCommand.self, FuzzCommand.self]
    #else
        static let simulatorCommands: [any ParsableCommand.Type] = []
    #endif

    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as CommandFailure {
            // Messages quote names and paths from files and stores: escaped, their lines kept.
            FileHandle.standardError.write(
                Data("folio: \(TerminalText.escaped(error.message, keepingLines: true))\n".utf8))
            Foundation.exit(error.exitCode)
        } catch {
            // Argument errors are invalid input: exit 2, as documented, rather than the parser's default of 64.
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(
                    Data((TerminalText.escaped(fullMessage(for: error), keepingLines: true) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}

/// A failure the tool reports in one line and maps to an exit code.
struct CommandFailure: Error {
    var message: String
    var exitCode: Int32

    /// The input was invalid: exit 2.
    static func invalidInput(_ message: String) -> CommandFailure { CommandFailure(message: message, exitCode: 2) }
    /// A check failed: exit 1.
    static func checkFailed(_ message: String) -> CommandFailure { CommandFailure(message: message, exitCode: 1) }
}
