import FolioCore
import FolioStore
import FolioTestDoubles
import Foundation

/// A concurrent editing trace recorded as its agents' devices make it (one device each, signed with its key), in one
/// shared text document: the changes in causal order, and the signed heads a device that holds them keeps.
struct SignedTraceHistory {
    let document: DocumentID
    let changes: [Change]
    /// The signer of each device's changes: the agents' keys, and the recorder's for the document's first change.
    private let keys: [DeviceID: DeviceKey]
    private let recorder: ChangeLogStore

    /// The default trace, Benchmarks/traces/friendsforever.json.gz.
    static var defaultTrace: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../Benchmarks/traces/friendsforever.json.gz").standardizedFileURL
    }

    init(_ trace: ConcurrentEditingTrace, document: DocumentID) throws {
        let clock = ManualClock(start: Timestamp(millisecondsSince1970: 1_767_225_600_000))
        let authorKeys = (0..<trace.agentCount).map { DeviceKey(using: SeededIdentifierSource(seed: 90 + UInt64($0))) }
        let authors = authorKeys.enumerated().map { $1.device(named: "agent \($0)") }.sorted { $0.id < $1.id }
        keys = Dictionary(uniqueKeysWithValues: authorKeys.map { ($0.id, $0) })
        recorder = try ChangeLogStore(
            inMemoryNamed: "recorder-\(UUID().uuidString)", key: DeviceKey(using: SeededIdentifierSource(seed: 80)),
            deviceName: "bench", clock: clock)
        let root = try recorder.append(
            .lifecycle(.create(name: "trace", type: "com.folio.text", container: .shared)), to: document)
        _ = try trace.record(in: recorder, document: document, root: root.hash, authors: authors)
        self.document = document
        changes = try recorder.changes(of: document)
    }

    /// The signed heads that reached a device holding the first `count` changes as the agents typed: a head of each
    /// change that another agent's change knows as that agent's latest (the other agent took the changes in up to a
    /// head there), and each agent's last change. The device keeps some of them (`ChangeLogStore.headSpan`).
    func heads(upTo count: Int) -> [SignedHead] {
        let prefix = changes.prefix(count)
        var last: [DeviceID: Change] = [:]
        var known: Set<ChangeID> = []
        for change in prefix {
            last[change.id.device] = change
            for entry in change.vector.entries where entry.device != change.id.device {
                known.insert(ChangeID(device: entry.device, seq: entry.seq))
            }
        }
        return prefix.filter { known.contains($0.id) || last[$0.id.device] == $0 }.compactMap { change in
            keys[change.id.device].map { SignedHead(signing: change, with: $0) } ?? recorder.signedHead(for: change)
        }
    }

    /// A store at `url` holding the first `count` changes with their heads, as a device that made or received them.
    func peer(at url: URL, upTo count: Int) throws -> ChangeLogStore {
        let peer = try ChangeLogStore(at: url, key: DeviceKey(), deviceName: "peer", access: .exclusive)
        _ = try peer.ingest(encoded: changes.prefix(count).map(EncodedChange.init), heads: heads(upTo: count))
        guard try peer.vector(of: document).changeCount == count else {
            throw BenchError("the peer did not take the first \(count) changes")
        }
        return peer
    }
}
