import Folio
import FolioCore
import FolioDocuments
import FolioStore
import FolioSync
import FolioTestDoubles

extension ScenarioRun {
    /// The devices exchange changes with the cloud, round after round, until a whole round moves nothing; after
    /// each exchange the device's open documents pick up what arrived (their conflict strategy runs then, and its
    /// resolutions go out in a second exchange of the same sync). Offline, partitioned-away and crashed devices are skipped.
    func sync(_ named: [SimulatedDevice]) async throws(SimulationError) {
        let participants = named.filter { $0.isRunning && $0.isOnline }
        for device in participants { touched.insert(device.name) }
        for device in named where !participants.contains(where: { $0 === device }) {
            events.append("\(device.name) skipped: \(device.isRunning ? "offline" : "not running")")
        }
        // What each device and its replica held after the device's last complete exchange: when neither has changed
        // since, another exchange would move nothing, and is not made.
        var settled: [String: (device: Int, cloud: Int)] = [:]
        var round = 0
        var moved = true
        var lost = false
        while moved {
            round += 1
            guard round <= 50 else {
                if lost {
                    throw .invariant(
                        "sync did not settle after 50 rounds: the network still lost messages in the last "
                            + "round (loss: \(scenario.network.loss)); with a lower loss, retries get through")
                }
                throw .invariant(
                    "sync did not settle after 50 rounds: devices keep making changes in answer to each other")
            }
            moved = false
            lost = false
            for device in participants {
                let library = try device.runningLibrary()
                let store = library.store
                let replica = cloud.replica(for: device.name)
                let counts: (device: Int, cloud: Int)
                do { counts = (try store.changeCount(), try replica.changeCount()) } catch { throw .store(error) }
                if let last = settled[device.name], last == counts { continue }
                // The sync brings the open documents up to date (and their strategy may settle what arrived): what
                // they showed before it is what the events compare with.
                var wasInConflict: [DocumentID: Bool] = [:]
                for (id, handle) in device.handles { wasInConflict[id] = await handle.isInConflict() }
                // The path an app takes: the library syncs through a transport, the files of documents renamed,
                // moved or deleted elsewhere follow, and the open documents pick up what arrived.
                let transport = CloudTransport(network: cloud.network, replica: replica)
                do {
                    try await library.sync(through: transport)
                } catch {
                    if let cause = (error as? DocumentError)?.cause as? SyncError { throw .sync(cause) }
                    throw .document(error)
                }
                let exchanges = transport.exchanges
                guard !exchanges.isEmpty else {
                    throw .invariant("\(device.name)'s sync ended without an exchange with the cloud")
                }
                var received = 0
                var updated = Set<DocumentID>()
                var complete = true
                for exchange in exchanges {
                    advance(by: 2 * scenario.network.latency.milliseconds * Int64(1 + exchange.ticks))
                    let sent = exchange.responder.changesApplied
                    received += exchange.initiator.changesApplied
                    updated.formUnion(exchange.initiator.updatedDocuments)
                    if !exchange.isComplete {
                        lost = true
                        complete = false
                    }
                    if sent > 0 || exchange.initiator.changesApplied > 0 || !exchange.isComplete {
                        moved = true
                        events.append(describe(exchange, of: device.name))
                    }
                }
                // What the device held before it answered: what it records in answer may still be to be sent.
                let held = counts.device + received
                if complete {
                    do { settled[device.name] = (held, try replica.changeCount()) } catch { throw .store(error) }
                } else {
                    settled[device.name] = nil
                }
                let answered = try await pickUp(
                    updated.sorted(), on: device, holding: held, wasInConflict: wasInConflict)
                if answered { moved = true }
            }
        }
        if participants.count > 1 { try checkConverged(participants, after: "a full sync") }
        if participants.count == devices.count && !cloud.isPartitioned {
            let lost = try lostChanges()
            if lost.count > 0 { throw .invariant("after every device synced, \(lost.first!) went missing") }
        }
    }

    private func describe(_ exchange: InMemoryExchange, of device: String) -> String {
        var text =
            "\(device) ⇄ cloud: sent \(exchange.responder.changesApplied), received \(exchange.initiator.changesApplied)"
        var faults: [String] = []
        if exchange.dropped > 0 { faults.append("\(exchange.dropped) dropped") }
        if exchange.duplicated > 0 { faults.append("\(exchange.duplicated) duplicated") }
        if exchange.reordered > 0 { faults.append("\(exchange.reordered) reordered") }
        if !faults.isEmpty { text += " (messages: \(faults.joined(separator: ", ")))" }
        if !exchange.isComplete { text += "; incomplete, retried" }
        return text
    }

    /// Reports what a sync brought: the open documents among `updated` that came into or out of conflict since
    /// `wasInConflict` (the sync brought them up to date), and the documents that arrived, which it opens. `before`
    /// is the device's change count before it answered; returns whether it made changes of its own in answer
    /// (resolutions).
    func pickUp(
        _ updated: [DocumentID], on device: SimulatedDevice, holding before: Int, wasInConflict: [DocumentID: Bool]
    ) async throws(SimulationError) -> Bool {
        if updated.isEmpty { return false }
        let store = try device.runningLibrary().store
        for id in updated {
            guard let handle = device.handles[id] else { continue }
            let wasInConflict = wasInConflict[id] ?? false
            let isInConflict = await handle.isInConflict()
            if isInConflict != wasInConflict {
                let name = await handle.displayName()
                events.append(
                    isInConflict
                        ? "\(device.name): \(name) is in conflict" : "\(device.name): \(name) is no longer in conflict")
            }
        }
        let after: Int
        do { after = try store.changeCount() } catch { throw .store(error) }
        // Opened after the known documents are refreshed, so that the copies a keep-both resolution just made open
        // too, along with the documents that arrived.
        let arrived = updated.contains { device.handles[$0] == nil && !device.isClosed($0) }
        if arrived || after > before {
            do {
                for name in try await device.openNewDocuments() { events.append("\(device.name) opened \(name)") }
            } catch {
                throw .document(error)
            }
        }
        if after > before {
            events.append(
                "\(device.name) recorded \(after - before) change\(after - before == 1 ? "" : "s") settling what arrived"
            )
        }
        return after > before
    }

    /// Requires `devices` (which just synced fully with one cloud replica) to hold the same changes.
    func checkConverged(_ devices: [SimulatedDevice], after what: String) throws(SimulationError) {
        let groups = Dictionary(grouping: devices, by: { cloud.group(of: $0.name) })
        for key in groups.keys.sorted() {
            let group = groups[key]!
            guard group.count > 1, let difference = try difference(among: group) else { continue }
            throw .invariant("after \(what), \(difference)")
        }
    }

    /// How the first two devices of `devices` that differ differ (documents or vectors), or `nil`. A document is
    /// compared only among the devices that publish it: one a device keeps in its local container is not expected
    /// to converge there.
    func difference(among devices: [SimulatedDevice]) throws(SimulationError) -> String? {
        var held: [(name: String, vectors: [DocumentID: VersionVector], unpublished: Set<DocumentID>)] = []
        for device in devices {
            let store = try device.runningLibrary().store
            do {
                held.append((device.name, try Self.vectors(in: store), try store.unpublished.documents()))
            } catch {
                throw .store(error)
            }
        }
        for id in Set(held.flatMap(\.vectors.keys)).sorted() {
            let publishing = held.filter { !$0.unpublished.contains(id) }
            guard let first = publishing.first,
                let other = publishing.dropFirst().first(where: { $0.vectors[id] != first.vectors[id] })
            else { continue }
            return "\(first.name) and \(other.name) hold different changes of \(documentName(id)): "
                + "\(describe(first.vectors[id])) vs \(describe(other.vectors[id]))"
        }
        return nil
    }

    /// A document as a person reads it: the name a device shows it under (or, while none does, its identity).
    private func documentName(_ id: DocumentID) -> String {
        let names = devices.compactMap { device in (try? device.library?.catalogInfo(of: id))?.map(\.displayName) }
        return names.first.map { "document \($0.debugDescription)" } ?? "document \(id)"
    }

    /// A vector with device names, such as `[iPad: 2, Mac: 1]`; "none" for a document a device does not hold.
    private func describe(_ vector: VersionVector?) -> String {
        guard let vector else { return "none" }
        let names = Dictionary(uniqueKeysWithValues: devices.map { ($0.device.id, $0.name) })
        return "[" + vector.entries.map { "\(names[$0.device] ?? "\($0.device)"): \($0.seq)" }.joined(separator: ", ")
            + "]"
    }
}
