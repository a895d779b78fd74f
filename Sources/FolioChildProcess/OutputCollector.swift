import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One pipe or terminal read to its end on a thread of its own, as bytes arrive, so that the process writing it
/// never blocks on a full pipe; the descriptor is closed at the end.
///
/// Reading a terminal's controller ends with an error (EIO) once every process holding the other side closed it;
/// that counts as its end.
public final class OutputCollector: Sendable {
    private struct State {
        var bytes = Data()
        var ended = false
    }

    private let state = Mutex(State())
    private let done = DispatchSemaphore(value: 0)

    /// Starts reading `descriptor`, which it owns from now on; `onLine` is called (on the reading thread) with each
    /// line as it arrives, without its newline.
    public init(_ descriptor: Int32, onLine: (@Sendable (String) -> Void)? = nil) {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            var pending: [UInt8] = []
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                state.withLock { $0.bytes.append(contentsOf: buffer[..<count]) }
                if let onLine {
                    pending.append(contentsOf: buffer[..<count])
                    var lineStart = 0
                    while let newline = pending[lineStart...].firstIndex(of: 10) {
                        onLine(String(decoding: pending[lineStart..<newline], as: UTF8.self))
                        lineStart = newline + 1
                    }
                    pending.removeFirst(lineStart)
                }
            }
            close(descriptor)
            state.withLock { $0.ended = true }
            done.signal()
        }
    }

    /// Everything read, once the descriptor reached its end (every writer closed it); blocks until then.
    public func wait() -> Data {
        done.wait()
        done.signal()
        return state.withLock { $0.bytes }
    }

    /// ``wait()`` as UTF-8 text.
    public func waitForText() -> String { String(decoding: wait(), as: UTF8.self) }

    /// Whether the end was reached.
    public var ended: Bool { state.withLock { $0.ended } }

    /// What was read so far.
    public var data: Data { state.withLock { $0.bytes } }
}
