import FolioFiles
import Foundation
import Synchronization

/// The file system the scenarios of `replay` and `fuzz` run on: the real one without `fsync` (the simulator's own
/// default), which records the directories made directly in the runs' parent directory (the runs' directories) so
/// that an interrupted command can remove them, and refuses every call once ``interrupt(removingRuns:)`` has begun.
final class RunFileSystem: FileSystem {
    /// The file system every call goes to.
    let base: any FileSystem
    /// The directory the runs' directories are made in, as ``PosixFileSystem/path(of:)`` writes it.
    let parent: String

    private struct State {
        var closed = false
        var callsUnderWay = 0
        var runDirectories: [URL] = []
    }

    private let state = Mutex(State())

    /// A file system whose runs make their directories in `parent`.
    init(runsIn parent: URL, base: any FileSystem = PosixFileSystem(synchronizes: false)) {
        self.base = base
        self.parent = PosixFileSystem.path(of: parent)
    }

    /// The directories made in the parent so far.
    var runDirectories: [URL] { state.withLock { $0.runDirectories } }

    /// Refuses every call from now on, waits (at most `patience` seconds) for the calls under way to return, so that
    /// nothing is made after this, then, with `removingRuns`, removes every run directory with what it holds.
    func interrupt(removingRuns: Bool, patience: Duration = .seconds(2)) async {
        state.withLock { $0.closed = true }
        let deadline = ContinuousClock.now + patience
        while state.withLock({ $0.callsUnderWay }) > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
        guard removingRuns else { return }
        for directory in runDirectories {
            // SQLite (which does not go through a file system) may still add a file beside an open store while the
            // tree goes: another attempt removes it.
            for _ in 0..<50 {
                try? base.remove(at: directory)
                if (try? base.itemKind(at: directory)) == .absent { break }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    /// Runs `body` unless the file system is closed, counting it as under way meanwhile.
    ///
    /// - Throws: ``FileSystemError`` (`EINTR`) once closed; what `body` throws.
    private func call<T>(_ operation: String, _ url: URL, _ body: () throws -> T) throws -> T {
        let open = state.withLock { state in
            guard !state.closed else { return false }
            state.callsUnderWay += 1
            return true
        }
        guard open else {
            throw FileSystemError(
                FileSystemErrorCode(errorNumber: EINTR), operation: operation, path: PosixFileSystem.path(of: url))
        }
        defer { state.withLock { $0.callsUnderWay -= 1 } }
        return try body()
    }

    func itemKind(at url: URL) throws -> FileItemKind {
        try call("lstat", url) { try base.itemKind(at: url) }
    }

    func attributes(at url: URL) throws -> FileAttributes {
        try call("lstat", url) { try base.attributes(at: url) }
    }

    func contents(of url: URL) throws -> Data {
        try call("read", url) { try base.contents(of: url) }
    }

    func contents(of url: URL, limit: Int) throws -> Data {
        try call("read", url) { try base.contents(of: url, limit: limit) }
    }

    func leadingBytes(of url: URL, count: Int) throws -> Data {
        try call("read", url) { try base.leadingBytes(of: url, count: count) }
    }

    func contentsOfDirectory(at url: URL) throws -> [String] {
        try call("opendir", url) { try base.contentsOfDirectory(at: url) }
    }

    func createDirectory(at url: URL) throws {
        try call("mkdir", url) {
            try base.createDirectory(at: url)
            if PosixFileSystem.path(of: url.deletingLastPathComponent()) == parent {
                state.withLock { $0.runDirectories.append(url) }
            }
        }
    }

    func writeFile(_ data: Data, to url: URL) throws {
        try call("write", url) { try base.writeFile(data, to: url) }
    }

    func copyFile(at source: URL, to destination: URL) throws {
        try call("copy", destination) { try base.copyFile(at: source, to: destination) }
    }

    func synchronizeFile(at url: URL) throws {
        try call("fsync", url) { try base.synchronizeFile(at: url) }
    }

    func synchronizeDirectory(at url: URL) throws {
        try call("fsync", url) { try base.synchronizeDirectory(at: url) }
    }

    func rename(_ source: URL, to destination: URL) throws {
        try call("rename", source) { try base.rename(source, to: destination) }
    }

    func link(_ source: URL, to destination: URL) throws {
        try call("link", destination) { try base.link(source, to: destination) }
    }

    func remove(at url: URL) throws {
        try call("remove", url) { try base.remove(at: url) }
    }

    func currentTime() -> Date {
        base.currentTime()
    }
}
