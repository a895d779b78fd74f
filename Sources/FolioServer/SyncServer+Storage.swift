import Foundation
import Logging

/// The server and its storage: calls that may block kept off the network's threads, and what other server processes
/// of a shared storage stored passed on to this one's devices.
extension SyncServer {
    /// Where the server waits for its accounts and for libraries to open: calls that block (the storage may be a
    /// database across the network), kept off the network's threads and Swift's cooperative ones.
    private static let blockingCalls = DispatchQueue(label: "folio.serve.storage", attributes: .concurrent)

    /// `body`'s result, computed on ``blockingCalls``.
    static func offTheLoop<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            blockingCalls.async { continuation.resume(returning: body()) }
        }
    }

    /// The library `name`, opened at its first connection.
    func library(_ name: String) throws -> ServedLibrary {
        try libraries.withLock { open in
            if let library = open[name] { return library }
            let log = try storage.openLog(of: name, logger: logger)
            let storage = self.storage
            let library = ServedLibrary(
                name: name, log: log, accounts: accounts, metrics: metrics, logger: logger,
                limits: configuration.limits, budget: budget,
                publishPresence: { frame in storage.publishPresence(frame, of: name) })
            open[name] = library
            return library
        }
    }

    /// Has the open library `name` (every open library for `nil`) pass on what other processes stored.
    func storedElsewhere(_ name: String?) {
        let open = libraries.withLock { open in name.map { open[$0].map { [$0] } ?? [] } ?? Array(open.values) }
        for library in open { Task { await library.otherProcessStored() } }
    }

    /// Has changes and presence that other processes of a shared storage stored or relayed reach this one's
    /// devices: presence in the order it comes.
    func watchOtherProcesses() {
        storage.watch { [weak self] name in self?.storedElsewhere(name) }
        let (frames, arriving) = AsyncStream.makeStream(
            of: (String, [UInt8]).self, bufferingPolicy: .bufferingNewest(Self.remotePresenceBuffer))
        storage.watchPresence { library, frame in arriving.yield((library, frame)) }
        let relay = Task { [weak self] in
            for await (name, frame) in frames {
                guard let library = self?.libraries.withLock({ $0[name] }) else { continue }
                await library.relayRemotePresence(frame)
            }
        }
        presenceRelay.withLock { $0 = relay }
    }

    /// How many presence frames of other processes may wait to be relayed; past it the oldest are dropped (the next
    /// state of a cursor replaces it anyway).
    static let remotePresenceBuffer = 1_024
}
