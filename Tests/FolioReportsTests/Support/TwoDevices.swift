import FolioConflicts
import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import Foundation

/// Two devices, an iPad and a Mac, each with its own library in one temporary directory, a manual clock and
/// seeded identities, so every run makes the same identities, times and hashes. Each store knows the other's
/// name, as a sync would have told it.
final class TwoDevices: Sendable {
    /// 2026-01-01T00:00:00Z.
    static let start = Timestamp(millisecondsSince1970: 1_767_225_600_000)

    let directory: URL
    let iPad: Peer
    let mac: Peer

    /// One device's side.
    final class Peer: Sendable {
        let root: URL
        let key: DeviceKey
        let device: Device
        let clock = ManualClock(start: TwoDevices.start)
        let identifiers: SeededIdentifierSource

        init(root: URL, name: String, seed: UInt64) {
            self.root = root
            key = DeviceKey(using: SeededIdentifierSource(seed: seed ^ 0xD0C5))
            device = key.device(named: name)
            identifiers = SeededIdentifierSource(seed: seed)
        }

        func library(_ policy: ConflictPolicy) throws -> DocumentLibrary {
            try DocumentLibrary(
                at: root, key: key, deviceName: device.name, clock: clock, identifiers: identifiers, autosave: .manual,
                conflictPolicy: policy, backgroundWork: false)
        }
    }

    init(iPadName: String = "iPad", macName: String = "Mac") throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("FolioReportsTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        iPad = Peer(root: directory.appendingPathComponent("iPad"), name: iPadName, seed: 1)
        mac = Peer(root: directory.appendingPathComponent("Mac"), name: macName, seed: 2)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Both libraries, each told the other device's name.
    func libraries(_ policy: ConflictPolicy) throws -> (DocumentLibrary, DocumentLibrary) {
        let a = try iPad.library(policy)
        let b = try mac.library(policy)
        try a.store.devices.register(mac.device)
        try b.store.devices.register(iPad.device)
        return (a, b)
    }

    var devices: [Device] { [iPad.device, mac.device] }
}

/// Each side ingests what the other has of document `id` and lacks, as a sync would.
func exchange(_ first: DocumentLibrary, _ second: DocumentLibrary, _ id: DocumentID) throws {
    try second.store.ingest(trusting: first.store.changes(of: id, since: second.store.vector(of: id)))
    try first.store.ingest(trusting: second.store.changes(of: id, since: first.store.vector(of: id)))
}
