import ArgumentParser
import FolioFiles
import FolioStore
import Foundation

/// `STORE` of the commands that only read a store (`log show`, `log verify`): the file, which must exist, and the
/// temporary copy of it that they open.
struct StoreCopyArgument: ParsableArguments {
    @Argument(help: "The store file (only read: a temporary copy of it is opened).")
    var store: String

    func validate() throws {
        let kind = try? PosixFileSystem().itemKind(at: URL(fileURLWithPath: store, isDirectory: false))
        guard (kind ?? .absent) != .absent else { throw ValidationError("no file at \(store)") }
    }

    /// Runs `body` on a temporary copy of the store, opened as the device that made it, then removes the copy.
    func withCopy<Result>(_ body: (ChangeLogStore) throws -> Result) throws -> Result {
        let copy = try StoreCopy(of: store)
        defer { copy.remove() }
        return try body(copy.store)
    }
}
