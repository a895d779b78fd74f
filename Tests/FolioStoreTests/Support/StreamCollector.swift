import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a pipe on a thread of its own as bytes arrive, so a test can watch a child's output while it runs.
final class StreamCollector: Sendable {
    private struct State {
        var bytes: [UInt8] = []
        var ended = false
    }

    private let state = Mutex(State())
    private let descriptor: Int32

    /// Starts reading `handle` (which the caller keeps alive until ``ended``).
    init(reading handle: FileHandle) {
        descriptor = handle.fileDescriptor
        let thread = Thread { [self] in self.readToEnd() }
        thread.start()
    }

    private func readToEnd() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                state.withLock { $0.bytes.append(contentsOf: buffer[0..<count]) }
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        state.withLock { $0.ended = true }
    }

    /// Whether the writer closed the pipe and everything was read.
    var ended: Bool { state.withLock { $0.ended } }

    /// The lines received so far that ended with a newline (a line still being written is not one).
    var completeLines: [String] {
        let bytes = state.withLock { $0.bytes }
        guard let last = bytes.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
        return bytes[...last].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast()
            .map { String(decoding: $0, as: UTF8.self) }
    }

    /// Everything received, as text.
    var text: String { String(decoding: state.withLock { $0.bytes }, as: UTF8.self) }

    /// Waits (without blocking a thread) until `condition` holds or `timeout` passes; returns whether it held.
    static func wait(timeout: Duration, until condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            if ContinuousClock.now >= deadline { return false }
            try await Task.sleep(for: .milliseconds(2))
        }
        return true
    }
}
