import FolioCore
import FolioDocuments
import FolioStore
import Foundation

extension ScenarioRun {
    /// After every step: every running device's log keeps its invariants, and what it holds joins what must never
    /// be lost; with no partition and no device down or offline, nothing acknowledged may be missing.
    ///
    /// Only documents whose vector moved since the device's last check are verified, and in them only the changes
    /// added since (the log is append-only: the same vector, the same changes). SQLite's own page check and a
    /// whole-store verification, every change re-hashed, are left to `full`, which the final check
    /// (``finalCheck()``) asks for.
    func checkInvariants(full: Bool = false) async throws(SimulationError) {
        for device in devices where device.isRunning && touched.contains(device.name) {
            let store = try device.runningLibrary().store
            do {
                let vectors = try Self.vectors(in: store)
                if full {
                    try store.checkInvariants(checkingPages: true)
                } else {
                    // Taken out while it is extended, so that it is not copied.
                    var progress = verification.removeValue(forKey: device.name) ?? VerificationProgress()
                    defer { verification[device.name] = progress }
                    let moved = vectors.keys.filter { vectors[$0] != progress.verifiedVector(of: $0) }
                    try store.checkInvariants(of: moved, continuing: &progress)
                }
                for (id, vector) in vectors { acknowledged[id, default: VersionVector()].merge(vector) }
            } catch {
                throw .invariant("\(device.name)'s log broke an invariant: \(error)")
            }
        }
    }

    /// Every document's vector in `store`, read at once.
    static func vectors(in store: ChangeLogStore) throws -> [DocumentID: VersionVector] {
        Dictionary(uniqueKeysWithValues: try store.summaries().map { ($0.document, $0.vector) })
    }

    /// How many acknowledged changes no running device holds.
    func lostChanges() throws(SimulationError) -> (count: Int, first: String?) {
        var held: [DocumentID: VersionVector] = [:]
        for device in devices where device.isRunning {
            let store = try device.runningLibrary().store
            do {
                for (id, vector) in try Self.vectors(in: store) { held[id, default: VersionVector()].merge(vector) }
            } catch {
                throw .store(error)
            }
        }
        var count = 0
        var first: String?
        for id in acknowledged.keys.sorted() {
            let missing = acknowledged[id]!.changesMissing(from: held[id] ?? VersionVector()).reduce(0) {
                $0 + $1.seqs.count
            }
            guard missing > 0 else { continue }
            count += missing
            if first == nil {
                first =
                    "\(missing) change\(missing == 1 ? "" : "s") of document \(id) (acknowledged up to \(acknowledged[id]!))"
            }
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
        try checkFilesAreOwn()
    }

    /// No running device saved two documents to one file: each must keep a file of its own (namesakes included),
    /// or one would read the other's text as a change made by another program.
    func checkFilesAreOwn() throws(SimulationError) {
        for device in devices where device.isRunning {
            if let shared = try sharedFile(on: device) { throw .invariant("on \(device.name), \(shared)") }
        }
    }

    /// Which two documents `device` saved to one file, or `nil`.
    private func sharedFile(on device: SimulatedDevice) throws(SimulationError) -> String? {
        let library = try device.runningLibrary()
        let files: [(document: DocumentID, url: URL)]
        do { files = try library.savedFileURLs() } catch { throw .document(error) }
        var owners: [URL: DocumentID] = [:]
        for (document, url) in files {
            guard let owner = owners.updateValue(document, forKey: url) else { continue }
            let names = [owner, document].map { id in
                let name = (try? library.catalogInfo(of: id))??.displayName
                return name.map { "\($0) (\(id))" } ?? "\(id)"
            }
            return "documents \(names[0]) and \(names[1]) were both saved to \(url.lastPathComponent)"
        }
        return nil
    }

    /// How the open documents of `devices` differ in contents, or `nil`. A document is compared only among the
    /// devices that publish it: one a device keeps in its local container is not expected to converge there.
    func contentDifference(among devices: [SimulatedDevice]) async throws(SimulationError) -> String? {
        var unpublished: [String: Set<DocumentID>] = [:]
        for device in devices {
            do { unpublished[device.name] = try device.runningLibrary().store.unpublished.documents() } catch {
                throw .store(error)
            }
        }
        let ids = Set(devices.flatMap(\.handles.keys)).sorted()
        for id in ids {
            let publishing = devices.filter { !unpublished[$0.name]!.contains(id) }
            guard let first = publishing.first, first.handles[id] != nil,
                let reference = try await first.observe(id)
            else { continue }
            for other in publishing.dropFirst() {
                guard let observation = try await other.observe(id), !observation.state.contains(.closed) else {
                    continue
                }
                if observation.contents != reference.contents {
                    return "\(first.name) and \(other.name) show different contents of \(reference.displayName)"
                }
            }
        }
        return nil
    }
}
