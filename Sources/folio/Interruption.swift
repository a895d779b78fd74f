import Foundation
import Synchronization
import UnixSignals

/// SIGINT (Ctrl-C) and SIGTERM while a command runs: instead of the process ending where it stands, `cleanUp` runs,
/// standard output and error are flushed, and the process exits 130 or 143 (128 + the signal), as a shell reports a
/// process those signals ended.
///
/// The signals arrive through swift-service-lifecycle's `UnixSignalsSequence`, so the clean-up runs as ordinary async
/// code (not in a signal handler) while the command's tasks go on around it; it must stop them from making anything
/// new (see ``RunFileSystem/interrupt(removingRuns:patience:)``), and the command must not print or exit on its own
/// once it has begun: what it finds then is the interruption's doing (see ``holdIfInterrupted()``). Nothing here
/// blocks a thread: a command held by an interruption waits on a continuation the exit never resumes.
final class Interruption: Sendable {
    private let watcher: Task<Void, Never>
    private let began: Flag

    /// Handles SIGINT and SIGTERM until the command that ``during(_:)`` runs returns, with `cleanUp(signal)` before
    /// exiting. A second signal while the first is being handled ends the process at once.
    init(cleanUp: @escaping @Sendable (Int32) async -> Void) async {
        let began = Flag()
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        self.began = began
        watcher = Task.detached {
            for await signal in signals {
                let number = signal.rawValue
                guard began.setIfUnset() else { _exit(128 + number) }
                // The clean-up runs beside this loop, which stays free to take a second signal.
                Task.detached {
                    await cleanUp(number)
                    // A flush blocked on a pipe nobody reads waits here; a second signal then ends the process.
                    fflush(nil)
                    _exit(128 + number)
                }
            }
        }
    }

    /// Runs `command`, then stops handling the signals (they end the process again); once an interruption has begun,
    /// waits for it to end the process instead of returning or throwing.
    func during<Result>(_ command: () async throws -> Result) async throws -> Result {
        let result: Swift.Result<Result, any Error>
        do { result = .success(try await command()) } catch { result = .failure(error) }
        await holdIfInterrupted()
        watcher.cancel()
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        return try result.get()
    }

    /// Waits, once an interruption has begun, for it to end the process: a command calls it before it prints what
    /// it found and before it returns, as a run the interruption cut short fails for that reason only.
    func holdIfInterrupted() async {
        guard began.isSet else { return }
        await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in
            // Never resumed: the clean-up ends the process.
        }
    }

    /// `SIGINT` or `SIGTERM`, for messages.
    static func name(of signal: Int32) -> String {
        signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "signal \(signal)"
    }
}

/// A flag set once, read from any thread.
private final class Flag: Sendable {
    private let value = Mutex(false)

    /// Sets the flag; `false` when it was set already.
    func setIfUnset() -> Bool {
        value.withLock { value in
            defer { value = true }
            return !value
        }
    }

    var isSet: Bool { value.withLock { $0 } }
}
