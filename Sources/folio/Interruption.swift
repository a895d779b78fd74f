import Dispatch
import Foundation
import Synchronization

/// SIGINT (Ctrl-C) and SIGTERM while a command runs: instead of the process ending where it stands, `cleanUp` runs,
/// standard output and error are flushed, and the process exits 130 or 143 (128 + the signal), as a shell reports a
/// process those signals ended.
///
/// The signals are taken by dispatch sources, on a queue of their own, so the clean-up runs as ordinary code (not in a
/// signal handler) while the command's tasks go on around it; it must stop them from making anything new (see
/// ``RunFileSystem/interrupt(removingRuns:patience:)``), and the command must not print or exit on its own once
/// it has begun: what it finds then is the interruption's doing (see ``holdIfInterrupted()``).
final class Interruption {
    private let sources: [any DispatchSourceSignal]
    private let began = Flag()

    /// Handles SIGINT and SIGTERM from now until ``end()``, with `cleanUp(signal)` before exiting.
    ///
    /// Returns once both sources are registered (or after a few seconds): a signal before that ends the process
    /// as it would without them, before anything it must clean up is made. (Setting the signals to be ignored
    /// meanwhile would lose one that came before the registration, where the sources take them over.)
    init(cleanUp: @escaping @Sendable (Int32) -> Void) {
        let began = self.began
        let registered = DispatchSemaphore(value: 0)
        sources = [SIGINT, SIGTERM].map { number in
            let queue = DispatchQueue(label: "folio.interruption.\(number)")
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setRegistrationHandler { registered.signal() }
            source.setEventHandler {
                // A second signal while the first is being handled ends the process at once: the clean-up runs
                // elsewhere, so that this handler is free to take it.
                guard began.setIfUnset() else { _exit(128 + number) }
                DispatchQueue.global().async {
                    cleanUp(number)
                    // A flush blocked on a pipe nobody reads waits here; a second signal then ends the process.
                    fflush(nil)
                    _exit(128 + number)
                }
            }
            source.resume()
            return source
        }
        for _ in sources where registered.wait(timeout: .now() + 5) == .timedOut {
            FileHandle.standardError.write(
                Data("folio: warning: Ctrl-C will not clean up: signals not taken over\n".utf8))
        }
    }

    /// Waits, once an interruption has begun, for it to end the process: a command calls it before it prints what
    /// it found and before it returns, as a run the interruption cut short fails for that reason only.
    func holdIfInterrupted() {
        guard began.isSet else { return }
        while true { sleep(60) }
    }

    /// Stops handling the signals (they end the process again), or waits for an interruption that has begun to end
    /// the process.
    func end() {
        holdIfInterrupted()
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }

    /// `SIGINT` or `SIGTERM`, for messages.
    static func name(of signal: Int32) -> String {
        signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "signal \(signal)"
    }
}

/// A flag set once, read from any thread.
private final class Flag: Sendable {
    private let value = Mutex(false)

    func set() { value.withLock { $0 = true } }

    /// Sets the flag; `false` when it was set already.
    func setIfUnset() -> Bool {
        value.withLock { value in
            defer { value = true }
            return !value
        }
    }

    var isSet: Bool { value.withLock { $0 } }
}
