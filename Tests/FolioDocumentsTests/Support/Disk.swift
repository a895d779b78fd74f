import Foundation

/// Helpers to look at directories on disk, by the test's own means (not through the code under test).
enum Disk {
    /// The names in `directory`, sorted; empty when it does not exist.
    static func names(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    /// The names in `directory` that are leftovers of a save: temporary files, staging directories, manifests
    /// being written.
    static func leftovers(in directory: URL) -> [String] {
        names(in: directory).filter { $0.contains("folio-tmp") || $0.hasPrefix(".folio-staging") }
    }

    /// Whether anything (a link included) is at `url`.
    static func exists(_ url: URL) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: url.path)) != nil
    }

    /// The contents of the file at `url`.
    static func contents(_ url: URL) throws -> Data {
        try Data(contentsOf: url)
    }

    /// Writes `text` at `url`, creating the directories above it.
    static func write(_ text: String, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }
}
