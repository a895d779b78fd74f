import Foundation

/// A fresh directory under the system's temporary directory, removed with everything in it when released.
final class TemporaryDirectory: Sendable {
    /// The directory.
    let url: URL

    /// Creates the directory.
    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("FolioSyncTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The URL of the item `name` inside the directory (not created).
    func file(_ name: String) -> URL {
        url.appendingPathComponent(name, isDirectory: false)
    }
}
