import Foundation

/// A fresh directory under the system's temporary directory, removed with everything in it when released.
///
/// Each suite instance (one per test) holds one, so every test works on its own files and stores.
public final class TemporaryDirectory: Sendable {
    /// The directory.
    public let url: URL

    /// Creates the directory, named after the test target (`FolioStoreTests-<UUID>`).
    ///
    /// - Parameter inMemory: whether to put it on the machine's tmpfs (`/dev/shm`) when there is one: for tests
    ///   that make and remove thousands of files, or sync a lot, where what a model decides is durable matters and
    ///   the disk's speed does not.
    public init(inMemory: Bool = false, _ file: String = #fileID) throws {
        let target = file.split(separator: "/").first.map(String.init) ?? "FolioTests"
        let memory = URL(fileURLWithPath: "/dev/shm", isDirectory: true)
        let base =
            inMemory && FileManager.default.isWritableFile(atPath: memory.path)
            ? memory : FileManager.default.temporaryDirectory
        url = base.appendingPathComponent("\(target)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The URL of the item `name` inside the directory (not created).
    public func file(_ name: String) -> URL {
        url.appendingPathComponent(name, isDirectory: false)
    }

    /// A new, empty subdirectory `name`.
    public func subdirectory(_ name: String) throws -> URL {
        let result = url.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: result, withIntermediateDirectories: true)
        return result
    }

    /// The names of the items in the directory, sorted.
    public func fileNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    /// Removes a store file and its SQLite companions (`-wal`, `-shm`).
    public func removeStore(_ name: String) {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(at: file(name + suffix))
        }
    }
}
