import Foundation

/// What a run of the `folio` tool printed, and how it exited.
public struct ToolRun: Sendable {
    /// The exit status.
    public var status: Int32
    /// What it wrote to standard output.
    public var output: String
    /// What it wrote to standard error.
    public var errors: String

    /// Runs the built `folio` with `arguments`, in `directory` if given.
    public static func folio(_ arguments: [String], in directory: URL? = nil) throws -> ToolRun {
        let process = Process()
        process.executableURL = try FolioExecutable.locate().get()
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ToolRun(
            status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
            errors: String(decoding: err, as: UTF8.self))
    }
}
