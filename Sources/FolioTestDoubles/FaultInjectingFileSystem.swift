import FolioFiles
import Foundation
import Synchronization

/// A `FileSystem` that wraps another and, at chosen steps, crashes or fails, to prove that a save, a sync through a
/// folder or a snapshot is never torn.
///
/// Every mutating call (create a directory, write, copy, fsync a file or a directory, rename, link, remove) is a
/// step, numbered
/// from 0 in the order the calls arrive. At a step with a ``Fault``:
/// - `crash`: the step does not happen (a write may leave a prefix of its bytes, a torn write), and it and every
///   later call, reads included, throw a `crashed` ``FileSystemError``, as if the process died there;
/// - `fail`: that one step throws the given code (EIO on fsync, ENOSPC on write…) and later calls work normally.
///
/// It also records the steps performed and the bytes written, for tests and benchmarks. A dry run without faults
/// lists the steps of an operation, so a test can then crash it at each one in turn.
///
/// A crash here is a process crash: every step before it stays on disk, synced or not, so it cannot tell a missing
/// fsync. Power loss, which keeps only what was synced, is another model (Folio's own tests have one for files and a
/// SQLite VFS for the store).
public final class FaultInjectingFileSystem: FileSystem {
    /// One mutating call.
    public struct Step: Hashable, Sendable, CustomStringConvertible {
        /// The kind of call.
        public enum Kind: String, Hashable, Sendable, CaseIterable {
            case createDirectory, writeFile, copyFile, synchronizeFile, synchronizeDirectory, rename, link, remove

            /// The system call's name, as error messages use it.
            var operation: String {
                switch self {
                case .createDirectory: "mkdir"
                case .writeFile, .copyFile: "write"
                case .synchronizeFile, .synchronizeDirectory: "fsync"
                case .rename: "rename"
                case .link: "link"
                case .remove: "remove"
                }
            }
        }

        /// The kind of call.
        public var kind: Kind
        /// The path it was about (the source of a copy, a rename or a link).
        public var path: String
        /// The destination of a copy, a rename or a link.
        public var destination: String?
        /// The bytes a write or a copy wrote (0 for other calls).
        public var byteCount: Int

        /// Describes a call.
        public init(kind: Kind, path: String, destination: String? = nil, byteCount: Int = 0) {
            self.kind = kind
            self.path = path
            self.destination = destination
            self.byteCount = byteCount
        }

        /// Such as "writeFile /tmp/a (12 bytes)" or "rename /tmp/a -> /tmp/b".
        public var description: String {
            var text = "\(kind.rawValue) \(path)"
            if let destination { text += " -> \(destination)" }
            if kind == .writeFile || kind == .copyFile { text += " (\(byteCount) bytes)" }
            return text
        }
    }

    /// What happens at one step.
    public struct Fault: Hashable, Sendable {
        /// Crash or fail.
        public enum Effect: Hashable, Sendable {
            /// The device stops: this step and every later call throw `crashed`.
            case crash
            /// This step throws the code; later calls work.
            case fail(FileSystemErrorCode)
        }

        /// The step's number, from 0.
        public var step: Int
        /// What happens there.
        public var effect: Effect
        /// For a write or a copy: how many leading bytes do reach the file before the fault (a torn write); `nil` for
        /// none.
        public var writtenPrefix: Int?

        /// The device crashes at `step`, after writing `writtenPrefix` bytes if the step is a write.
        public static func crash(atStep step: Int, writtenPrefix: Int? = nil) -> Fault {
            Fault(step: step, effect: .crash, writtenPrefix: writtenPrefix)
        }

        /// The call at `step` fails with `code`, after writing `writtenPrefix` bytes if it is a write.
        public static func fail(atStep step: Int, with code: FileSystemErrorCode, writtenPrefix: Int? = nil) -> Fault {
            Fault(step: step, effect: .fail(code), writtenPrefix: writtenPrefix)
        }
    }

    private struct State {
        var faults: [Int: Fault]
        var stepCount = 0
        var steps: [Step] = []
        var bytesWritten = 0
        var crashed = false
    }

    /// The file system that performs the calls.
    public let base: any FileSystem
    private let state: Mutex<State>

    /// Wraps `base`, with faults at the given steps (at most one per step; a later one replaces an earlier one).
    public init(wrapping base: any FileSystem = PosixFileSystem(), faults: [Fault] = []) {
        self.base = base
        var byStep: [Int: Fault] = [:]
        for fault in faults {
            precondition(fault.step >= 0, "a fault's step is counted from 0")
            byStep[fault.step] = fault
        }
        state = Mutex(State(faults: byStep))
    }

    /// The mutating calls performed, in order (a call that failed or crashed is not listed).
    public var steps: [Step] { state.withLock { $0.steps } }

    /// The number of mutating calls attempted, including ones that failed or crashed.
    public var stepCount: Int { state.withLock { $0.stepCount } }

    /// The bytes written to files, torn prefixes included.
    public var bytesWritten: Int { state.withLock { $0.bytesWritten } }

    /// Whether a crash fault fired or ``crash()`` was called.
    public var hasCrashed: Bool { state.withLock { $0.crashed } }

    /// Adds `fault` (replacing one at the same step), to strike a step that is still to come: a simulator arms a
    /// crash this way at the moment it decides a device dies during its next save.
    ///
    /// - Precondition: the step is not counted yet (`fault.step >= stepCount`).
    public func inject(_ fault: Fault) {
        state.withLock { state in
            precondition(fault.step >= state.stepCount, "step \(fault.step) has already run")
            state.faults[fault.step] = fault
        }
    }

    /// Kills the process this file system serves, between two of its steps: every later call throws `crashed`,
    /// reads included, as after a crash fault.
    public func crash() {
        state.withLock { $0.crashed = true }
    }

    /// Forgets the steps and bytes recorded so far (not the step numbering, so faults keep their place).
    public func resetRecord() {
        state.withLock { state in
            state.steps = []
            state.bytesWritten = 0
        }
    }

    // MARK: - Reads

    /// What is at `url`, without following a symbolic link there (`lstat`).
    ///
    /// - Throws: ``FileSystemError`` when the item cannot be examined (an absent item is not an error).
    public func itemKind(at url: URL) throws -> FileItemKind {
        try checkAlive("lstat", url)
        return try base.itemKind(at: url)
    }

    /// The kind, size and modification time of the item at `url`, without following a symbolic link there.
    ///
    /// - Throws: ``FileSystemError``, `notFound` when nothing is there.
    public func attributes(at url: URL) throws -> FileAttributes {
        try checkAlive("lstat", url)
        return try base.attributes(at: url)
    }

    /// The time the file system stamps on what is written now, to tell whether a file's recorded modification time
    /// is recent enough that a later write could have left it unchanged. By default the system's clock.
    public func currentTime() -> Date { base.currentTime() }

    /// The whole contents of the regular file at `url`.
    ///
    /// - Throws: ``FileSystemError``; `symbolicLink` for a link and `notRegularFile` for a directory, FIFO or
    ///   device, which are never opened for reading.
    public func contents(of url: URL) throws -> Data {
        try checkAlive("read", url)
        return try base.contents(of: url)
    }

    /// The whole contents of the regular file at `url`, which must not hold more than `limit` bytes: for files
    /// anyone could have put there. No more than `limit + 1` bytes are read, however large the file is.
    ///
    /// - Throws: ``FileSystemError`` as ``contents(of:)``, and ``FileSystemErrorCode/tooLarge`` when the file holds
    ///   more than `limit` bytes.
    public func contents(of url: URL, limit: Int) throws -> Data {
        try checkAlive("read", url)
        return try base.contents(of: url, limit: limit)
    }

    /// The first `count` bytes of the regular file at `url`, or all of them when it holds fewer: for a header. No
    /// more than `count` bytes are read, however large the file is.
    ///
    /// - Throws: ``FileSystemError`` as ``contents(of:)``.
    public func leadingBytes(of url: URL, count: Int) throws -> Data {
        try checkAlive("read", url)
        return try base.leadingBytes(of: url, count: count)
    }

    /// The names in the directory at `url`, without `.` and `..`, sorted by their UTF-8 bytes.
    ///
    /// - Throws: ``FileSystemError``; `notDirectory` when `url` is not a directory.
    public func contentsOfDirectory(at url: URL) throws -> [String] {
        try checkAlive("list", url)
        return try base.contentsOfDirectory(at: url)
    }

    // MARK: - Steps

    /// Creates one directory (its parent must exist).
    ///
    /// - Throws: ``FileSystemError``; `exists` when something is already there.
    public func createDirectory(at url: URL) throws {
        try perform(Step(.createDirectory, url)) {
            try base.createDirectory(at: url)
        }
    }

    /// Creates or truncates the regular file at `url` and writes all of `data` to it; does not sync.
    ///
    /// - Throws: ``FileSystemError``; `symbolicLink` when a link is at `url` (it is not followed).
    public func writeFile(_ data: Data, to url: URL) throws {
        let step = Step(.writeFile, url, byteCount: data.count)
        try perform(
            step,
            tornWrite: { prefix in
                let torn = data.prefix(prefix)
                try? self.base.writeFile(torn, to: url)
                return torn.count
            },
            operation: { try base.writeFile(data, to: url) }
        )
    }

    /// Creates or truncates the regular file at `destination` and copies into it the contents of the regular file at
    /// `source`, a piece at a time (a large file is never held in memory); does not sync.
    ///
    /// - Throws: ``FileSystemError``; `symbolicLink` when a link is at either URL (neither is followed),
    ///   `notRegularFile` when `source` is a directory or special file.
    public func copyFile(at source: URL, to destination: URL) throws {
        try checkAlive("lstat", source)
        // The size is known only if the source can be examined; the copy then reports its own error.
        let size = (try? base.attributes(at: source).size) ?? 0
        let step = Step(.copyFile, source, to: destination, byteCount: size)
        try perform(
            step,
            tornWrite: { prefix in
                guard let torn = try? self.base.contents(of: source).prefix(prefix) else { return 0 }
                try? self.base.writeFile(torn, to: destination)
                return torn.count
            },
            operation: { try base.copyFile(at: source, to: destination) }
        )
    }

    /// Flushes the file at `url` to stable storage (`fsync`).
    ///
    /// - Throws: ``FileSystemError``; an I/O error here means the data may not be on disk.
    public func synchronizeFile(at url: URL) throws {
        try perform(Step(.synchronizeFile, url)) {
            try base.synchronizeFile(at: url)
        }
    }

    /// Flushes the directory at `url` (its entries: creations, renames, removals) to stable storage.
    ///
    /// - Throws: ``FileSystemError``.
    public func synchronizeDirectory(at url: URL) throws {
        try perform(Step(.synchronizeDirectory, url)) {
            try base.synchronizeDirectory(at: url)
        }
    }

    /// Renames `source` to `destination` atomically, replacing a file (or an empty directory) there.
    ///
    /// - Throws: ``FileSystemError``.
    public func rename(_ source: URL, to destination: URL) throws {
        try perform(Step(.rename, source, to: destination)) {
            try base.rename(source, to: destination)
        }
    }

    /// Gives the file at `source` the further name `destination` (a hard link), atomically and never replacing
    /// anything: publishing a file whole under a name another process may take at the same time. `source` keeps its
    /// name; remove it afterwards.
    ///
    /// - Throws: ``FileSystemError``; `exists` when something is at `destination` (it is left as it is).
    public func link(_ source: URL, to destination: URL) throws {
        try perform(Step(.link, source, to: destination)) {
            try base.link(source, to: destination)
        }
    }

    /// Removes the file, link or whole directory tree at `url`, never following a link.
    ///
    /// - Throws: ``FileSystemError``; `notFound` when nothing is there.
    public func remove(at url: URL) throws {
        try perform(Step(.remove, url)) {
            try base.remove(at: url)
        }
    }

    // MARK: - Helpers

    private func checkAlive(_ operation: String, _ url: URL) throws {
        if state.withLock({ $0.crashed }) {
            throw FileSystemError(.crashed, operation: operation, path: PosixFileSystem.path(of: url))
        }
    }

    /// Numbers the step and applies its fault, or performs it. The lock is held throughout so that steps from
    /// several threads are numbered in the order they happen.
    private func perform(
        _ step: Step, tornWrite: ((Int) -> Int)? = nil,
        operation body: () throws -> Void
    ) throws {
        try state.withLock { (state: inout State) throws -> Void in
            if state.crashed {
                throw FileSystemError(.crashed, operation: step.kind.operation, path: step.path)
            }
            let number = state.stepCount
            state.stepCount += 1
            if let fault = state.faults[number] {
                if let prefix = fault.writtenPrefix, let tornWrite {
                    state.bytesWritten += tornWrite(max(prefix, 0))
                }
                switch fault.effect {
                case .crash:
                    state.crashed = true
                    throw FileSystemError(.crashed, operation: step.kind.operation, path: step.path)
                case .fail(let code):
                    throw FileSystemError(code, operation: step.kind.operation, path: step.path)
                }
            }
            try body()
            state.steps.append(step)
            state.bytesWritten += step.byteCount
        }
    }
}

extension FaultInjectingFileSystem.Step {
    /// Describes a call about `url` (and `destination`), by the paths the file system names them with.
    init(_ kind: Kind, _ url: URL, to destination: URL? = nil, byteCount: Int = 0) {
        self.init(
            kind: kind, path: PosixFileSystem.path(of: url), destination: destination.map(PosixFileSystem.path(of:)),
            byteCount: byteCount)
    }
}
