import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Synchronization
import Testing

/// Where a document's work runs: its own queue, off the cooperative pool; `perform` runs a block of calls there.
@Suite struct DocumentExecutorTests {
    let fixture: LibraryFixture

    init() throws {
        fixture = try LibraryFixture()
    }

    @Test func performRunsABlockOfEditsAsPlainCallsAndReturnsItsResult() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        let length = try await document.perform { document in
            for word in ["one ", "two ", "three"] { try document.edit(.append(word)) }
            try document.commit()
            return document.model.scalarCount
        }
        #expect(length == 13)
        #expect(await document.model.text == "one two three")
        #expect(!(try library.edits(of: document.id)).isEmpty, "the block committed its edits")
    }

    @Test func performRethrowsWhatTheBlockThrowsAndKeepsEarlierEdits() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        await #expect(throws: DocumentError.self) {
            try await document.perform { document in
                try document.edit(.append("kept"))
                try document.edit(.delete(at: 100, count: 1))
            }
        }
        #expect(await document.model.text == "kept")
    }

    @Test(.ownThread) func documentsBlockedInTheirWorkLeaveTheCooperativePoolFree() async throws {
        let library = try fixture.library()
        // More blocked documents than the pool has threads: on the pool, nothing else could run until they end.
        let count = ProcessInfo.processInfo.activeProcessorCount + 1
        var documents: [Document<TextDocument>] = []
        for index in 0..<count {
            documents.append(try await library.create(TextDocument.self, named: "Note \(index)"))
        }
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        // How many documents are inside their blocked work now.
        final class Count: Sendable { let value = Mutex(0) }
        let inside = Count()
        var blocked: [Task<Void, Never>] = []
        for document in documents {
            blocked.append(
                Task {
                    await document.perform { _ in
                        inside.value.withLock { $0 += 1 }
                        started.signal()
                        // Long enough for a pool task to run on a loaded machine; released at once after it.
                        _ = release.wait(timeout: .now() + 120)
                        inside.value.withLock { $0 -= 1 }
                    }
                })
        }
        for _ in 0..<count { _ = started.wait(timeout: .now() + 60) }
        // A task on the pool runs while every document still blocks: on the pool, it could not before they end.
        let blockedWhileItRan = await Task.detached { inside.value.withLock { $0 } }.value
        for _ in 0..<count { release.signal() }
        for task in blocked { await task.value }
        #expect(blockedWhileItRan == count, "a pool task ran while \(blockedWhileItRan) of \(count) documents blocked")
    }

    /// A library given an executor runs its documents and its calls there, and a task preferring the same executor
    /// runs there too (so that awaiting a document wakes no other thread). Without one, each document has a queue of
    /// its own.
    @Test func aLibraryGivenAnExecutorRunsItsDocumentsThere() async throws {
        let executor = BlockingWorkExecutor(label: "test.library")
        let library = try DocumentLibrary(
            at: fixture.root, key: fixture.key, deviceName: fixture.device.name, clock: fixture.clock,
            identifiers: fixture.identifiers, autosave: .manual, backgroundWork: false, executor: executor)
        #expect(library.workExecutor === executor)
        #expect(!executor.isCurrent)
        let places = try await withTaskExecutorPreference(executor) {
            let caller = executor.isCurrent
            let document = try await library.create(TextDocument.self, named: "Notes")
            let inDocument = await document.perform { document in
                try? document.edit(.append("x"))
                return executor.isCurrent
            }
            return (caller, inDocument, executor.isCurrent)
        }
        #expect(places.0, "the task preferring the executor runs on it")
        #expect(places.1, "the document runs on the library's executor")
        #expect(places.2, "the task comes back to it")

        let other = try DocumentLibrary(
            at: fixture.directory.url.appendingPathComponent("Other"), clock: fixture.clock, backgroundWork: false)
        #expect(other.workExecutor == nil)
        let document = try await other.create(TextDocument.self, named: "Notes")
        let onGiven = await withTaskExecutorPreference(executor) { await document.perform { _ in executor.isCurrent } }
        #expect(!onGiven, "a document of a library without one runs on its own queue")
    }
}
