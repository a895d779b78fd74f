import Foundation

/// `--work-dir DIR` of `replay` and `fuzz`: where the simulated devices' libraries live while scenarios run.
enum WorkDirectory {
    /// Makes `path` (with its parents) if it is missing, before anything runs, and returns its URL.
    ///
    /// - Throws: ``CommandFailure`` (invalid input, exit 2) when `path`, or a directory above it, is a file or
    ///   cannot be made, saying what to write instead, so that no scenario runs against a directory it cannot use.
    static func prepare(_ path: String) throws -> URL {
        let url = URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL
        var made = ""
        for component in url.pathComponents {
            made = made.isEmpty || made == "/" ? made + component : made + "/" + component
            var info = stat()
            if stat(made, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else {
                    throw CommandFailure.invalidInput(made == url.path
                        ? "--work-dir \(path) is a file; name a directory (it is made if missing)"
                        : "--work-dir \(path) cannot be made (\(made) is a file); name a directory you can write to")
                }
            } else if mkdir(made, 0o777) != 0 && errno != EEXIST {
                let reason = String(cString: strerror(errno))
                throw CommandFailure.invalidInput("--work-dir \(path) cannot be made (\(made): \(reason)); name a directory you can write to")
            }
        }
        return url
    }
}
