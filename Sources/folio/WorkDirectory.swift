import FolioFiles
import Foundation

/// `--work-dir DIR` of `replay` and `fuzz`: where the simulated devices' libraries live while scenarios run.
enum WorkDirectory {
    /// Makes `path` (with its parents) on `fileSystem` if it is missing, before anything runs, and returns its URL.
    ///
    /// - Throws: ``CommandFailure`` (invalid input, exit 2) when `path`, or a directory above it, is a file or
    ///   cannot be made, saying what to write instead, so that no scenario runs against a directory it cannot use.
    static func prepare(_ path: String, fileSystem: any FileSystem = PosixFileSystem()) throws(CommandFailure) -> URL {
        let url = URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL
        do {
            try fileSystem.createDirectories(at: url)
        } catch let error as FileSystemError where error.code == .notDirectory {
            throw CommandFailure.invalidInput(
                error.path == PosixFileSystem.path(of: url)
                    ? "--work-dir \(path) is a file; name a directory (it is made if missing)"
                    : "--work-dir \(path) cannot be made (\(error.path) is a file); name a directory you can write to")
        } catch let error as FileSystemError {
            throw CommandFailure.invalidInput(
                "--work-dir \(path) cannot be made (\(error.path): \(error.code.reason)); name a directory you can write to"
            )
        } catch {
            throw CommandFailure.invalidInput(
                "--work-dir \(path) cannot be made (\(error)); name a directory you can write to")
        }
        return url
    }
}
