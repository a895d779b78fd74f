import FolioCore
import FolioStore
import FolioSync
import Synchronization

/// A deterministic in-memory network on which stores sync, with injected faults: the simulator's cloud.
///
/// The cloud is a peer holding a store (like iCloud's server copy), not a relay: each device syncs with the cloud's
/// store (``InMemoryTransport``), so devices that are never online at the same time still converge through it, and
/// a partition is simply a device that does not sync. Any two stores can also sync directly (``sync(_:with:)``).
///
/// An exchange runs to its end inside the call, in virtual time: messages are delivered one at a time (dropped,
/// duplicated, delayed and reordered as ``faults`` says); when none is due, time moves on one tick and both sides
/// time out (``SyncSession/tick()``) and repeat what they wait for. Every random choice (faults and session
/// numbers) comes from one generator seeded at creation, so a sequence of exchanges is reproduced by its seed.
public final class InMemoryHub: Sendable {
    /// The faults injected into every exchange.
    public let faults: FaultProfile
    /// How many ticks an exchange may take before it gives up (the report then says it is incomplete).
    public let maxTicks: Int
    /// The message size limits of the sessions.
    public let limits: SyncSession.Limits
    // Mutex: exchanges may run from several tasks; each draws its seeds under the lock.
    private let generator: Mutex<SplitMix64>

    /// Creates a network.
    ///
    /// - Parameters:
    ///   - seed: fixes every fault and session number.
    ///   - faults: how unreliable the network is.
    ///   - maxTicks: how many timeouts an exchange may take before it gives up.
    ///   - limits: how large a `changes` message may grow.
    public init(
        seed: UInt64, faults: FaultProfile = .reliable, maxTicks: Int = 200,
        limits: SyncSession.Limits = SyncSession.Limits()
    ) {
        precondition(maxTicks >= 0, "maxTicks must not be negative")
        self.faults = faults
        self.maxTicks = maxTicks
        self.limits = limits
        generator = Mutex(SplitMix64(seed: seed))
    }

    /// Runs one exchange between two stores until the initiator is finished or the ticks run out.
    ///
    /// - Throws: ``SyncError`` `store` when either store fails; what was ingested before stays (it is correct).
    /// - Precondition: the stores are different.
    @discardableResult
    public func sync(_ initiator: ChangeLogStore, with responder: ChangeLogStore) throws -> InMemoryExchange {
        do {
            return try exchange(initiator, with: responder)
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.store, "the in-memory exchange failed", cause: error)
        }
    }

    /// The exchange of ``sync(_:with:)``; the sync driver throws ``SyncError``.
    private func exchange(_ initiator: ChangeLogStore, with responder: ChangeLogStore) throws -> InMemoryExchange {
        precondition(initiator !== responder, "a store cannot sync with itself")
        let (linkSeed, initiatorID, responderID) = generator.withLock { ($0.next(), $0.next(), $0.next()) }
        var link = InMemoryLink(faults: faults, seed: linkSeed)
        var first = try SyncDriver(store: initiator, role: .initiator, id: initiatorID, limits: limits)
        var second = try SyncDriver(store: responder, role: .responder, id: responderID, limits: limits)
        for bytes in try first.start() { link.send(bytes, to: .responder) }
        var ticks = 0
        // The responder's asking for blobs is answered too before the exchange ends.
        while !first.isFinished || second.awaitsBlobs {
            // Consecutive `changes` messages to one side are taken together, so that their changes are ingested in
            // one transaction; the exchange goes as if they were delivered one by one.
            if let delivery = link.nextDeliveries(batching: SyncMessage.startsAsChanges) {
                switch delivery.to {
                case .responder:
                    for bytes in try second.receive(batch: delivery.messages) { link.send(bytes, to: .initiator) }
                case .initiator:
                    for bytes in try first.receive(batch: delivery.messages) { link.send(bytes, to: .responder) }
                }
                continue
            }
            guard ticks < maxTicks else { break }
            ticks += 1
            link.advance()
            for bytes in try first.tick() { link.send(bytes, to: .responder) }
            for bytes in try second.tick() { link.send(bytes, to: .initiator) }
        }
        var responderReport = second.report
        // The initiator finishes only on the responder's `done`, sent once the responder was complete; the
        // initiator's last `done` may not have reached it, which does not matter.
        responderReport.isComplete = first.isFinished && second.session.isComplete
        return InMemoryExchange(
            initiator: first.report, responder: responderReport, ticks: ticks, faults: link.statistics)
    }
}
