import FolioConflicts
import FolioCore
import Foundation

/// Merges several devices' captures into the report's documents: one entry per document, conflicts and losses
/// deduplicated across devices, each device's final state, and the union of their causal graphs.
///
/// Devices are named once for the whole report: the names given, then what the captures' stores know, then a
/// name made from the identity (`device 1a2b3c4d`); a device whose person is known is named with it (`Anna on iPad`,
/// `Device.label`), so that the report names people wherever it names devices; two devices that would share a name
/// get their identity's first digits added. Nothing depends on hash-table order: the same captures always assemble
/// the same way.
public struct ReportAssembler: Sendable {
    /// The report's devices, in order: those given, then the other capturing devices, then the devices seen only in
    /// the logs, by name.
    public let devices: [ReportDevice]
    private let captures: [DocumentCapture]
    private let names: [DeviceID: String]
    private let rank: [DeviceID: Int]

    /// Prepares to assemble `captures`.
    ///
    /// - Parameters:
    ///   - captures: every device's captures, in any order.
    ///   - devices: the devices in the order the report shows them, with the names to show (an empty name is
    ///     replaced as described above).
    public init(captures: [DocumentCapture], devices: [Device] = []) {
        self.captures = captures
        var given: [DeviceID: String] = [:]
        var persons: [DeviceID: String] = [:]
        var order: [DeviceID] = []
        func note(_ device: Device, ordered: Bool) {
            if ordered, !order.contains(device.id) { order.append(device.id) }
            if given[device.id] == nil, !device.name.isEmpty { given[device.id] = device.name }
            if persons[device.id] == nil, !device.person.isEmpty { persons[device.id] = device.person }
        }
        for device in devices { note(device, ordered: true) }
        for capture in captures { note(capture.device, ordered: true) }
        // Stores that disagree on a name: the store of the device that comes first wins, whatever the captures' order.
        for capture in captures.sorted(by: { order.firstIndex(of: $0.device.id)! < order.firstIndex(of: $1.device.id)! }
        ) {
            for device in capture.knownDevices { note(device, ordered: false) }
        }
        var seen = Set(order)
        var others: [DeviceID] = []
        for capture in captures {
            for id in capture.changes.map(\.id.device) + capture.vector.devices where !seen.contains(id) {
                seen.insert(id)
                others.append(id)
            }
        }
        // Devices a store knows by name but that appear in no captured log or vector are left out.
        var names: [DeviceID: String] = [:]
        for id in order + others {
            let label = Device(id: id, name: given[id] ?? "", person: persons[id] ?? "").label
            names[id] = label.isEmpty ? "device \(id.uuid.description.prefix(8))" : label
        }
        var holders: [String: [DeviceID]] = [:]
        for id in order + others { holders[names[id]!, default: []].append(id) }
        for (name, ids) in holders where ids.count > 1 {
            for id in ids { names[id] = "\(name) (\(id.uuid.description.prefix(8)))" }
        }
        others.sort { ReportOrder.precedes((names[$0]!, $0), (names[$1]!, $1)) }
        self.names = names
        rank = Dictionary(uniqueKeysWithValues: (order + others).enumerated().map { ($1, $0) })
        self.devices = (order + others).map { ReportDevice(name: names[$0]!, id: $0.description, person: persons[$0]) }
    }

    /// The name the report gives `device`.
    public func name(of device: DeviceID) -> String {
        names[device] ?? "device \(device.uuid.description.prefix(8))"
    }

    /// The documents, by name then identity.
    public func documents() -> [DocumentReport] {
        var byDocument: [DocumentID: [DocumentCapture]] = [:]
        for capture in captures { byDocument[capture.document, default: []].append(capture) }
        return byDocument.keys.sorted().map { id in
            document(id, byDocument[id]!.sorted { deviceRank($0.device.id) < deviceRank($1.device.id) })
        }
        .sorted { ReportOrder.precedes(($0.name, $0.id), ($1.name, $1.id)) }
    }

    private func document(_ id: DocumentID, _ captures: [DocumentCapture]) -> DocumentReport {
        let named = captures.first { $0.exists } ?? captures.first { !$0.name.isEmpty }
        var changes: [ChangeHash: Change] = [:]
        for capture in captures { for change in capture.changes { changes[change.hash] = change } }
        let conflicts = conflictEntries(captures)
        return DocumentReport(
            id: id.description, name: named?.name ?? id.description, type: named?.type ?? "",
            conflicts: conflicts.map(\.entry),
            losses: conflicts.compactMap { lossEntry($0.resolution, $0.versions, changes) },
            devices: captures.map(state), graph: graph(changes))
    }

    // MARK: Conflicts

    private struct Assembled {
        var entry: ConflictEntry
        var resolution: Change?
        var versions: [DocumentCapture.Version]
        var order: (UInt64, Int, UInt64, String)
    }

    private func conflictEntries(_ captures: [DocumentCapture]) -> [Assembled] {
        var found: [String: Assembled] = [:]
        var keys: [String] = []
        for capture in captures {
            for conflict in capture.conflicts {
                let heads = conflict.versions.map(\.head.hash).sorted()
                let key =
                    conflict.resolution.map { "resolved \($0.hash.hex)" } ?? "open "
                    + heads.map(\.hex).joined(separator: " ")
                let device = name(of: capture.device.id)
                if found[key] != nil {
                    if !found[key]!.entry.seenBy.contains(device) { found[key]!.entry.seenBy.append(device) }
                    continue
                }
                keys.append(key)
                found[key] = assemble(conflict, heads: heads, seenBy: device)
            }
        }
        return keys.map { found[$0]! }.sorted { $0.order < $1.order }
    }

    private func assemble(_ conflict: DocumentCapture.Conflict, heads: [ChangeHash], seenBy device: String) -> Assembled
    {
        let identity = heads.flatMap(\.bytes) + (conflict.resolution?.hash.bytes ?? [])
        let versions = conflict.versions.map { version in
            VersionEntry(
                device: name(of: version.head.id.device), time: version.head.wallTime.description,
                vector: vector(version.head.vector), head: version.head.hash.shortHex,
                heads: version.heads.map(\.shortHex),
                isCurrent: version.isCurrent, changes: version.changes)
        }
        var strategy = conflict.policy
        var resolution: ResolutionEntry?
        if let change = conflict.resolution, case .resolution(let settled) = change.kind {
            strategy = ReportLines.name(of: settled.strategy)
            resolution = ResolutionEntry(
                head: change.hash.shortHex, resolvedBy: name(of: change.id.device), time: change.wallTime.description,
                strategy: ReportLines.name(of: settled.strategy), chosen: settled.chosen.map(\.shortHex),
                discarded: settled.discarded.map(\.shortHex),
                characterLevel: settled.strategy == .merge && settled.contents == nil ? true : nil)
        }
        let entry = ConflictEntry(
            id: String(ContentHash(hashing: identity).hex.prefix(12)), status: resolution == nil ? .open : .resolved,
            seenBy: [device], ancestorHead: conflict.ancestor?.hash.shortHex, versions: versions, strategy: strategy,
            resolution: resolution)
        let latest = conflict.versions.map(\.head.lamport).max() ?? 0
        return Assembled(
            entry: entry, resolution: conflict.resolution, versions: conflict.versions,
            order: (latest, resolution == nil ? 1 : 0, conflict.resolution?.lamport ?? 0, entry.id))
    }

    private func lossEntry(
        _ resolution: Change?, _ versions: [DocumentCapture.Version], _ changes: [ChangeHash: Change]
    ) -> LossEntry? {
        guard let resolution, case .resolution(let settled) = resolution.kind else { return nil }
        let discarded = settled.discarded.map { hash in
            let version = versions.first { $0.heads.contains(hash) }
            let head = changes[hash] ?? version?.head
            return DiscardedVersionEntry(
                head: hash.shortHex, device: head.map { name(of: $0.id.device) } ?? "",
                time: head?.wallTime.description ?? "", contents: version?.contents ?? [])
        }
        return LossEntry(
            resolution: resolution.hash.shortHex, resolvedBy: name(of: resolution.id.device),
            strategy: ReportLines.name(of: settled.strategy), time: resolution.wallTime.description,
            discarded: discarded)
    }

    // MARK: States and graph

    private func state(_ capture: DocumentCapture) -> DocumentOnDevice {
        let known = Dictionary(capture.changes.map { ($0.hash, $0) }, uniquingKeysWith: { first, _ in first })
        func key(_ hash: ChangeHash) -> (UInt64, Int, ChangeHash) {
            (known[hash]?.lamport ?? 0, known[hash].map { deviceRank($0.id.device) } ?? 0, hash)
        }
        let heads = capture.heads.sorted { key($0) < key($1) }
        return DocumentOnDevice(
            device: name(of: capture.device.id), exists: capture.exists, name: capture.name, state: capture.state,
            vector: vector(capture.vector), heads: heads.map(\.shortHex), contents: capture.contents,
            authorship: capture.authorship.map(authorship))
    }

    private func authorship(_ stretches: [DocumentCapture.Stretch]) -> [AuthoredStretch] {
        var start = 0
        return stretches.map { stretch in
            defer { start += stretch.text.unicodeScalars.count }
            return AuthoredStretch(
                start: start, text: stretch.text, change: stretch.change.map { "\(name(of: $0.device)):\($0.seq)" },
                device: stretch.change.map { name(of: $0.device) })
        }
    }

    private func graph(_ changes: [ChangeHash: Change]) -> [GraphNode] {
        let ordered = changes.values.sorted {
            guard $0.lamport == $1.lamport else { return $0.lamport < $1.lamport }
            return ReportOrder.precedes((name(of: $0.id.device), $0.id), (name(of: $1.id.device), $1.id))
        }
        func nodeID(_ change: Change) -> String { "\(name(of: change.id.device)):\(change.id.seq)" }
        return ordered.map { change in
            GraphNode(
                id: nodeID(change), hash: change.hash.shortHex, device: name(of: change.id.device), seq: change.id.seq,
                lamport: change.lamport, kind: ReportLines.kind(of: change),
                parents: change.parents.map { changes[$0].map(nodeID) ?? $0.shortHex },
                time: change.wallTime.description)
        }
    }

    private func vector(_ vector: VersionVector) -> [VectorEntry] {
        vector.entries
            .sorted { (deviceRank($0.device), $0.device) < (deviceRank($1.device), $1.device) }
            .map { VectorEntry(device: name(of: $0.device), seq: $0.seq) }
    }

    private func deviceRank(_ device: DeviceID) -> Int { rank[device] ?? Int.max }
}

extension DocumentReport {
    /// The documents of `captures`, assembled by a ``ReportAssembler``.
    public static func assemble(_ captures: [DocumentCapture], devices: [Device] = []) -> [DocumentReport] {
        ReportAssembler(captures: captures, devices: devices).documents()
    }
}

/// Orders for output that do not depend on the platform's string comparison.
enum ReportOrder {
    /// By name (Unicode scalar values), then by the tie-breaker.
    static func precedes<T: Comparable>(_ lhs: (String, T), _ rhs: (String, T)) -> Bool {
        if lhs.0 != rhs.0 { return lhs.0.unicodeScalars.lexicographicallyPrecedes(rhs.0.unicodeScalars) }
        return lhs.1 < rhs.1
    }
}
