import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Editing traces ship gzip-compressed; they are read in the process, and a damaged file is refused with a reason.
@Suite(.workPool) struct TraceLoadingTests {
    static let friendsforever = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Benchmarks/traces/friendsforever.json.gz").standardizedFileURL

    @Test func aCompressedTraceLoads() throws {
        let trace = try ConcurrentEditingTrace.load(Self.friendsforever)
        #expect(trace.transactions.count == 26_078)
        #expect(trace.agentCount == 2)
    }

    @Test func aTruncatedOrForeignFileIsRefusedWithItsReason() throws {
        let directory = try TemporaryDirectory()
        let whole = try Data(contentsOf: Self.friendsforever)
        let truncated = directory.url.appendingPathComponent("cut.json.gz")
        try whole.prefix(whole.count / 2).write(to: truncated)
        let foreign = directory.url.appendingPathComponent("plain.json.gz")
        try Data("{\"txns\": []}".utf8).write(to: foreign)
        for (file, reason) in [(truncated, "ends early"), (foreign, "incorrect header check")] {
            #expect {
                _ = try ConcurrentEditingTrace.load(file)
            } throws: { error in
                "\(error)".contains("not a whole gzip stream") && "\(error)".contains(reason)
            }
        }
        #expect(throws: (any Error).self) { _ = try Gunzip.decompress(Data()) }
    }
}
