import Foundation

/// A directory for one execution's files, emptied before each use: under `FOLIO_FUZZ_TMP` (which `Tools/fuzz/run`
/// points at a tmpfs, so that fsyncs cost little) or the system's temporary directory.
enum ScratchDirectory {
    static let base: URL = {
        let parent = ProcessInfo.processInfo.environment["FOLIO_FUZZ_TMP"] ?? NSTemporaryDirectory()
        let url = URL(fileURLWithPath: parent, isDirectory: true)
            .appendingPathComponent("folio-fuzz-\(getpid())", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: ScratchDirectory.base) }
        return url
    }()

    /// `name` under the base, new and empty.
    static func fresh(_ name: String) -> URL {
        let url = base.appendingPathComponent(name, isDirectory: true)
        if FileManager.default.fileExists(atPath: url.path) {
            do {
                try FileManager.default.removeItem(at: url)
            } catch {
                fatalError("cannot empty \(url.path): \(error)")
            }
        }
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            fatalError("cannot create \(url.path): \(error)")
        }
        return url
    }
}
