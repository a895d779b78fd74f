import Foundation

/// A fresh directory under the system's temporary directory, removed with everything in it when released.
///
/// Each suite instance (one per test) holds one, so every test works on its own on-disk stores.
final class TemporaryDirectory: Sendable {
    /// The directory.
    let url: URL

    /// Creates the directory.
    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("FolioStoreTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The URL of the file `name` inside the directory (not created).
    func file(_ name: String) -> URL {
        url.appendingPathComponent(name, isDirectory: false)
    }

    /// The names of the files in the directory, sorted.
    func fileNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    /// Removes a store file and its SQLite companions (`-wal`, `-shm`).
    func removeStore(_ name: String) {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(at: file(name + suffix))
        }
    }
}
