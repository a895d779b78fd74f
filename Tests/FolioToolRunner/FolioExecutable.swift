import Foundation

/// The built `folio` tool, for this package's own tests: a test target that depends on it makes SwiftPM build it
/// next to the test bundle.
public enum FolioExecutable {
    /// Where the tool is, or a sentence saying where it was looked for.
    public static func locate() -> Result<URL, LocateError> {
        // Another build of the tool, to run the tests against it (an earlier commit's, to see a test fail there).
        if let path = ProcessInfo.processInfo.environment["FOLIO_TEST_TOOL"], !path.isEmpty {
            return .success(URL(fileURLWithPath: path))
        }
        var candidates: [URL] = []
        // The test runner is `.build/<triple>/debug/FolioPackageTests.xctest` (or a helper next to it).
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        candidates.append(runner.deletingLastPathComponent().appendingPathComponent("folio"))
        let bundle = Bundle.main.bundleURL.resolvingSymlinksInPath()
        candidates.append(bundle.appendingPathComponent("folio"))
        candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("folio"))
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent("folio"))
        }
        // Last resort: the package's own `.build/debug` (this file is Tests/FolioToolRunner/…).
        var packageRoot = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { packageRoot.deleteLastPathComponent() }
        candidates.append(packageRoot.appendingPathComponent(".build/debug/folio"))

        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.path) {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue
            {
                return .success(candidate)
            }
        }
        return .failure(
            LocateError(
                message: "the built folio tool was not found; looked at: "
                    + candidates.map(\.path).joined(separator: ", ")))
    }

    /// Where the tool was looked for.
    public struct LocateError: Error, CustomStringConvertible {
        /// Where the tool was looked for, and why it was not found there.
        public var message: String
        /// The message.
        public var description: String { message }
    }
}
