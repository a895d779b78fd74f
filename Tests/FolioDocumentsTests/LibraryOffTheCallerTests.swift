import Dispatch
import FolioCore
import FolioDocuments
import FolioFiles
import FolioModels
import Foundation
import Synchronization
import Testing

/// The library's operations that read the store or touch the disk (list, look up, rename, move, delete, restore,
/// import, follow a file) run on a queue of their own: the caller's thread, which from async code is one of the few
/// threads of Swift's cooperative pool, never waits for a transaction or an `fsync`.
@Suite struct LibraryOffTheCallerTests {
    /// A task executor on one queue, marked so that code can tell it runs there.
    final class CallerQueue: TaskExecutor, @unchecked Sendable {
        // @unchecked: the only state is an immutable dispatch queue.
        static let key = DispatchSpecificKey<Bool>()
        private let queue = DispatchQueue(label: "caller")

        init() { queue.setSpecific(key: Self.key, value: true) }

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let executor = asUnownedTaskExecutor()
            queue.async { job.runSynchronously(on: executor) }
        }

        static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) ?? false }
    }

    /// The real file system, noting for each call whether it ran on the caller's queue.
    final class NotingFileSystem: FileSystem {
        let base = PosixFileSystem()
        let calls = Mutex<[(name: String, onCaller: Bool)]>([])

        /// `call` on the real disk, noted as `name`.
        func noted<Value>(_ name: String, _ call: () throws -> Value) rethrows -> Value {
            calls.withLock { $0.append((name, CallerQueue.isCurrent)) }
            return try call()
        }
        func itemKind(at url: URL) throws -> FileItemKind { try noted("itemKind") { try base.itemKind(at: url) } }
        func attributes(at url: URL) throws -> FileAttributes {
            try noted("attributes") { try base.attributes(at: url) }
        }
        func contents(of url: URL) throws -> Data { try noted("contents") { try base.contents(of: url) } }
        func contentsOfDirectory(at url: URL) throws -> [String] {
            try noted("contentsOfDirectory") { try base.contentsOfDirectory(at: url) }
        }
        func createDirectory(at url: URL) throws { try noted("createDirectory") { try base.createDirectory(at: url) } }
        func writeFile(_ data: Data, to url: URL) throws {
            try noted("writeFile") { try base.writeFile(data, to: url) }
        }
        func synchronizeFile(at url: URL) throws { try noted("synchronizeFile") { try base.synchronizeFile(at: url) } }
        func synchronizeDirectory(at url: URL) throws {
            try noted("synchronizeDirectory") { try base.synchronizeDirectory(at: url) }
        }
        func rename(_ source: URL, to destination: URL) throws {
            try noted("rename") { try base.rename(source, to: destination) }
        }
        func remove(at url: URL) throws { try noted("remove") { try base.remove(at: url) } }
    }

    @Test func catalogOperationsRunOffTheCallersThread() async throws {
        let fixture = try LibraryFixture()
        let disk = NotingFileSystem()
        let library = try fixture.library(fileSystem: disk)
        let document = try await library.create(TextDocument.self, named: "Notes", in: .shared)
        try await document.edit(.append("text\n"))
        try await document.save()
        try await document.close()
        let outside = fixture.root.appendingPathComponent("Inbox.txt")
        try Data("imported\n".utf8).write(to: outside)
        disk.calls.withLock { $0.removeAll() }

        try await withTaskExecutorPreference(CallerQueue()) {
            #expect(CallerQueue.isCurrent, "the test runs its calls on the caller's queue")
            #expect(try await library.documents().map(\.displayName) == ["Notes"])
            let info = try #require(try await library.info(of: document.id))
            _ = try await library.fileURL(for: info)
            try await library.rename(document.id, to: "Renamed")
            try await library.move(document.id, to: .local)
            try await library.updateFile(of: document.id)
            #expect(try await !library.hasCompetingVersions(document.id))
            _ = try await library.savedFiles()
            try await library.delete(document.id)
            try await library.restore(document.id)
            _ = try await library.importFile(at: outside, as: TextDocument.self)
        }

        let calls = disk.calls.withLock { $0 }
        #expect(Set(calls.map(\.name)).isSuperset(of: ["rename", "remove"]), "the file followed the changes")
        let onCaller = calls.filter(\.onCaller).map(\.name)
        #expect(onCaller.isEmpty, "file work on the caller's thread: \(onCaller)")
    }
}
