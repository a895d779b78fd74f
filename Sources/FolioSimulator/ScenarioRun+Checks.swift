import FolioCore
import FolioDocuments
import FolioStore

extension ScenarioRun {
    /// After every step: every running device's log keeps its invariants, and what it holds joins what must never
    /// be lost; with no partition and no device down or offline, nothing acknowledged may be missing.
    ///
    /// SQLite's own page check is left to the final check (``finalCheck()``) and to `full`.
    func checkInvariants(full: Bool = false) async throws(SimulationError) {
        for device in devices where device.isRunning && touched.contains(device.name) {
            let store = try device.runningLibrary().store
            do {
                try store.checkInvariants(checkingPages: full)
                for id in try store.documents() {
                    acknowledged[id, default: VersionVector()].merge(try store.vector(of: id))
                }
            } catch {
                throw .invariant("\(device.name)'s log broke an invariant: \(error)")
            }
        }
    }

    /// How many acknowledged changes no running device holds.
    func lostChanges() throws(SimulationError) -> (count: Int, first: String?) {
        var held: [DocumentID: VersionVector] = [:]
        for device in devices where device.isRunning {
            let store = try device.runningLibrary().store
            do {
                for id in try store.documents() { held[id, default: VersionVector()].merge(try store.vector(of: id)) }
            } catch {
                throw .store(error)
            }
        }
        var count = 0
        var first: String?
        for id in acknowledged.keys.sorted() {
            let missing = acknowledged[id]!.changesMissing(from: held[id] ?? VersionVector()).reduce(0) { $0 + $1.seqs.count }
            guard missing > 0 else { continue }
            count += missing
            if first == nil { first = "\(missing) change\(missing == 1 ? "" : "s") of document \(id) (acknowledged up to \(acknowledged[id]!))" }
        }
        return (count, first)
    }

    /// What fuzzing requires at the end: heal, restart, bring every device online, sync everything; then every
    /// device holds the same changes and contents, and no acknowledged change is missing.
    func finalCheck() async throws(SimulationError) {
        events = []
        do { try cloud.heal() } catch { throw .sync(error) }
        for device in devices {
            device.isOnline = true
            if !device.isRunning {
                do { try await device.start() } catch { throw .invariant("\(device.name) could not restart: \(error)") }
            }
        }
        touched = Set(devices.map(\.name))
        try await sync(devices)
        try await checkInvariants(full: true)
        let lost = try lostChanges()
        if lost.count > 0 { throw .invariant("after a full sync, \(lost.first!) went missing") }
        if let difference = try await contentDifference(among: devices) {
            throw .invariant("after a full sync, \(difference)")
        }
    }

    /// How the open documents of `devices` differ in contents, or `nil`.
    func contentDifference(among devices: [SimulatedDevice]) async throws(SimulationError) -> String? {
        guard let first = devices.first else { return nil }
        for id in first.handles.keys.sorted() {
            guard let reference = try await first.observe(id) else { continue }
            for other in devices.dropFirst() {
                guard let observation = try await other.observe(id), !observation.state.contains(.closed) else { continue }
                if observation.contents != reference.contents {
                    return "\(first.name) and \(other.name) show different contents of \(reference.displayName)"
                }
            }
        }
        return nil
    }
}
