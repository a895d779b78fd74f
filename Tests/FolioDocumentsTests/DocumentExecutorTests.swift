import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioTesting
import Foundation
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

    @Test func documentsBlockedInTheirWorkLeaveTheCooperativePoolFree() async throws {
        let library = try fixture.library()
        // More blocked documents than the pool has threads: on the pool, nothing else could run until they end.
        let count = ProcessInfo.processInfo.activeProcessorCount + 1
        var documents: [Document<TextDocument>] = []
        for index in 0..<count {
            documents.append(try await library.create(TextDocument.self, named: "Note \(index)"))
        }
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        var blocked: [Task<Void, Never>] = []
        for document in documents {
            blocked.append(
                Task {
                    await document.perform { _ in
                        started.signal()
                        _ = release.wait(timeout: .now() + 10)
                    }
                })
        }
        for _ in 0..<count { _ = started.wait(timeout: .now() + 10) }
        let start = DispatchTime.now().uptimeNanoseconds
        let ranWhileBlocked = await Task.detached { release.wait(timeout: .now()) == .timedOut }.value
        let waitedSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        for _ in 0..<count { release.signal() }
        for task in blocked { await task.value }
        #expect(ranWhileBlocked, "a pool task ran while every document was blocked")
        #expect(waitedSeconds < 5, "it did not wait for the documents: \(waitedSeconds) s")
    }
}
