import FolioCore
import Foundation

/// Remote changes from several devices, generated in memory the way peers would make them: in rounds, each device
/// makes one to three edits on top of everything from the previous round (so a device's first edit of a round has
/// one parent per device), then all sync. The list is in arrival order: rounds in order, devices interleaved.
struct MultiDeviceWorkload {
    let document: DocumentID
    let devices: [DeviceID]
    /// The devices' signing keys, in the order of ``devices``.
    let keys: [DeviceKey]
    let changes: [Change]

    init(changeCount: Int, deviceCount: Int, seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let ids = SeededIdentifierSource(seed: seed)
        document = DocumentID(using: ids)
        keys = (0..<deviceCount).map { _ in DeviceKey(using: ids) }
        devices = keys.map(\.id)
        var changes: [Change] = []
        changes.reserveCapacity(changeCount)
        var vector = VersionVector()
        var heads: [ChangeHash] = []
        var lamport: UInt64 = 0
        var time = Timestamp(millisecondsSince1970: 1_767_225_600_000)
        while changes.count < changeCount {
            var roundHeads: [ChangeHash] = []
            var roundVector = vector
            var roundLamport = lamport
            // Each device's run of edits, generated whole, then interleaved one edit per device at a time.
            var runs: [[Change]] = []
            for device in devices {
                var run: [Change] = []
                var parents = heads
                var own = vector
                var ownLamport = lamport
                for _ in 0..<Int(1 + random.next() % 3) {
                    let seq = own[device] + 1
                    own[device] = seq
                    ownLamport += 1
                    time = time.advanced(by: 250)
                    let change = Change(
                        document: document, id: ChangeID(device: device, seq: seq), parents: parents, vector: own,
                        lamport: ownLamport, wallTime: time,
                        kind: .edit(Edit(operations: Data([0x01, UInt8(random.next() % 200), 0x61]))))
                    run.append(change)
                    parents = [change.hash]
                }
                roundHeads.append(run.last!.hash)
                roundVector.merge(own)
                roundLamport = max(roundLamport, ownLamport)
                runs.append(run)
            }
            var index = 0
            while runs.contains(where: { index < $0.count }) {
                for run in runs where index < run.count { changes.append(run[index]) }
                index += 1
            }
            heads = roundHeads
            vector = roundVector
            lamport = roundLamport
        }
        self.changes = Array(changes.prefix(changeCount))
    }

    /// The vector of the first `count` changes (a causally closed prefix: each device's edits keep their order).
    func vector(ofFirst count: Int) -> VersionVector {
        var vector = VersionVector()
        for change in changes.prefix(count) { vector.include(change.id) }
        return vector
    }

    /// The heads a peer sends with `batch`: each device's latest change in it, signed by the device.
    func heads(for batch: ArraySlice<Change>) -> [SignedHead] {
        var latest: [DeviceID: Change] = [:]
        for change in batch where change.id.seq > latest[change.id.device]?.id.seq ?? 0 {
            latest[change.id.device] = change
        }
        return zip(devices, keys).compactMap { device, key in latest[device].map { SignedHead(signing: $0, with: key) }
        }
    }
}
