import FolioCore
import Foundation

/// Sample packages for the save tests.
enum Samples {
    /// A package of text files, by path.
    static func package(_ files: [String: String]) throws -> FilePackage {
        try FilePackage(files: files.mapValues { Data($0.utf8) })
    }

    /// The previous version of a document in the crash tests: files at the top level and in two directories.
    static func oldPackage() throws -> FilePackage {
        try package([
            "text.md": "# Title\n\nFirst draft.\n",
            "images/a.png": String(repeating: "a", count: 300),
            "images/b.png": String(repeating: "b", count: 500),
            "notes/old.txt": "to be removed",
        ])
    }

    /// The next version: `text.md` changed, `notes/old.txt` removed (and its directory), `media/new.bin` added.
    static func newPackage() throws -> FilePackage {
        try package([
            "text.md": "# Title\n\nSecond draft, longer than the first.\n",
            "images/a.png": String(repeating: "a", count: 300),
            "images/b.png": String(repeating: "b", count: 500),
            "media/new.bin": String(repeating: "n", count: 700),
        ])
    }
}
