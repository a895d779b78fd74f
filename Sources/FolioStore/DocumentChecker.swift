import FolioCore
import Foundation
import GRDB

/// What a document's log was verified to hold: the changes, as a causal graph, and what was derived from them.
/// Carried from one check to the next by ``VerificationProgress``.
struct VerifiedLog: Sendable {
    var graph = CausalGraph()
    /// The vector of the changes verified.
    var vector = VersionVector()
    /// The hashes of the lifecycle changes among them.
    var lifecycle: Set<ChangeHash> = []
}

/// Verifies one document's log, frontier and pending changes.
///
/// Starting from a log verified before (``VerifiedLog``), only the changes added since are decoded, re-hashed and
/// checked against their parents; the ones verified before are still read (the rows' identities, so that a change
/// gone missing or a gap is found), and the frontier and the waiting changes are checked in full.
struct DocumentChecker {
    let document: DocumentID
    let documentRow: Int64
    /// The device of a row of the device table (`nil`: no such row).
    let deviceOf: (Int64) -> DeviceID?
    /// What the store remembers of the document, with exclusive access (`nil` then: nothing).
    let remembered: CachedDocument??
    /// What is verified: at first what was verified before (empty: nothing), in the end everything checked.
    private(set) var log: VerifiedLog
    /// How many changes were decoded and re-hashed.
    private(set) var changes = 0
    private(set) var problems: [VerificationReport.Problem] = []

    init(
        document: DocumentID, documentRow: Int64, deviceOf: @escaping (Int64) -> DeviceID?,
        remembered: CachedDocument??,
        verified: VerifiedLog = VerifiedLog()
    ) {
        self.document = document
        self.documentRow = documentRow
        self.deviceOf = deviceOf
        self.remembered = remembered
        self.log = verified
    }

    private mutating func problem(_ change: ChangeID?, _ message: String) {
        problems.append(.init(document: document, change: change, message: message))
    }

    mutating func check(in db: Database) throws {
        let verifiedBefore = log.vector
        var vector = VersionVector()
        var added: [CausalNode] = []
        let folded = try checkSegments(verifiedBefore: verifiedBefore, vector: &vector, added: &added, in: db)
        var rows = try RawRows(
            db.cachedStatement(
                sql: "SELECT device, seq, lamport, hash, body, kind FROM change WHERE document = ? ORDER BY device, seq"
            ),
            arguments: [documentRow])
        var previous: (device: Int64, seq: Int64)?
        while let row = try rows.next() {
            let deviceRow: Int64 = row[0]
            let seq: Int64 = row[1]
            guard let device = deviceOf(deviceRow), seq >= 1 else {
                problem(nil, "a change row names unknown device row \(deviceRow) or seq \(seq)")
                continue
            }
            let id = ChangeID(device: device, seq: UInt64(seq))
            let expectedSeq = previous?.device == deviceRow ? previous!.seq + 1 : Int64(folded[device] ?? 0) + 1
            if seq != expectedSeq {
                problem(id, "sequence numbers of \(device) jump from \(expectedSeq - 1) to \(seq)")
            }
            previous = (deviceRow, seq)
            vector.include(id)
            // Verified before: the log is append-only, so the row still holds what was checked then.
            if verifiedBefore.contains(id) { continue }
            changes += 1
            let change: Change
            do {
                change = try ColumnDecoder.change(row[4], document: document)
            } catch {
                problem(id, "its bytes cannot be decoded: \(error)")
                continue
            }
            if change.id != id { problem(id, "its bytes say it is \(change.id)") }
            let recorded = (row[3] as Data?).flatMap { try? ColumnDecoder.changeHash($0) }
            if change.hash != recorded {
                problem(
                    id,
                    "its bytes hash to \(change.hash.shortHex), not to the recorded \(recorded?.shortHex ?? "(damaged hash)"): the row was altered"
                )
            }
            let lamport: Int64 = row[2]
            if lamport < 0 || change.lamport != UInt64(lamport) {
                problem(id, "its lamport column disagrees with its bytes")
            }
            if Int64(change.kind.tag) != row[5] as Int64 { problem(id, "its kind column disagrees with its bytes") }
            if case .lifecycle = change.kind { log.lifecycle.insert(change.hash) }
            let node = CausalNode(change)
            log.graph.insert(node)
            added.append(node)
        }
        if !verifiedBefore.isContained(in: vector) {
            problem(nil, "changes verified before are gone: the log held \(verifiedBefore), it now holds \(vector)")
        }
        log.vector = vector
        // The changes verified before were checked against their parents then; a change's soundness depends only on
        // its parents, which were there before it.
        if let inconsistency = log.graph.firstInconsistency(among: CausalGraph.causalOrder(added)) {
            problem(nil, inconsistency)
        }
        if let remembered = remembered??.lifecycle, Set(remembered.map(\.hash)) != log.lifecycle {
            problem(
                nil,
                "the lifecycle changes the store keeps in memory (\(remembered.count)) differ from the log's (\(log.lifecycle.count))"
            )
        }
        try checkFrontier(graph: log.graph, vector: vector, in: db)
        try checkPending(vector: vector, in: db)
    }

    /// Decodes every segment of the document again (which recomputes every hash from the canonical encodings it
    /// rebuilds) and checks that they hold each device's changes from its first up to the seq the frontier says
    /// they fold. Returns, per device, the highest seq they hold.
    private mutating func checkSegments(
        verifiedBefore: VersionVector, vector: inout VersionVector, added: inout [CausalNode], in db: Database
    ) throws -> [DeviceID: UInt64] {
        var decoded = DecodedSegments()
        let range = ChangeLogStore.segmentRange(of: documentRow)
        var rows = try RawRows(
            db.cachedStatement(
                sql: "SELECT id, count, bytes, lifecycle, seqs FROM segment WHERE id BETWEEN ? AND ? ORDER BY id"),
            arguments: [range.lowerBound, range.upperBound])
        while let row = try rows.next() {
            let id: Int64 = row[0]
            let changes: [Change]
            do {
                changes = try ChangeRunCodec.decode(row[2] as Data, document: document) {
                    decoded.change($0).map(ChangeStamp.init)
                }
            } catch {
                problem(nil, "segment \(id & 0xFFFF_FFFF) does not decode: \(error)")
                continue
            }
            if changes.count != row[1] as Int {
                problem(
                    nil, "segment \(id & 0xFFFF_FFFF) holds \(changes.count) changes, not the \(row[1] as Int) recorded"
                )
            }
            // Alone, with only the stamps it carries, it must give the same changes (folds and reads decode it so).
            let alone = try? ChangeRunCodec.decode(row[2] as Data, document: document) { _ in nil }
            if alone?.map(\.hash) != changes.map(\.hash) {
                problem(
                    nil,
                    "segment \(id & 0xFFFF_FFFF) decoded alone differs from the changes before it: its stamps of them are wrong"
                )
            }
            let lifecycle = changes.filter { if case .lifecycle = $0.kind { true } else { false } }
            if (row[3] as Data) != ChangeLogStore.lifecycleCopies(of: lifecycle) {
                problem(nil, "segment \(id & 0xFFFF_FFFF)'s copies of its lifecycle changes differ from what it holds")
            }
            // Readers find a change's segment by them (a wrong one would make them read the segments in order).
            if (row[4] as Data?).flatMap({ try? SegmentSeqs(decoding: $0) }) != SegmentSeqs(changes) {
                problem(nil, "segment \(id & 0xFFFF_FFFF)'s seqs are missing or differ from the changes it holds")
            }
            decoded.append(segment: id, changes: changes)
        }
        var highest: [DeviceID: UInt64] = [:]
        for change in decoded.changes.sorted(by: { $0.id < $1.id }) {
            let expected = (highest[change.id.device] ?? 0) + 1
            if change.id.seq != expected {
                problem(
                    change.id,
                    "the segments' changes of \(change.id.device) jump from \(expected - 1) to \(change.id.seq)")
            }
            highest[change.id.device] = change.id.seq
            vector.include(change.id)
        }
        var marks: [DeviceID: UInt64] = [:]
        var statement = try RawRows(
            db.cachedStatement(sql: "SELECT device, folded FROM frontier WHERE document = ? AND folded > 0"),
            arguments: [documentRow])
        while let row = try statement.next() {
            guard let device = deviceOf(row[0]) else { continue }
            marks[device] = UInt64(max(row[1] as Int64, 0))
        }
        if marks != highest {
            problem(
                nil,
                "the frontier says segments hold \(marks.sorted { $0.key < $1.key }.map { "\($0.key)#\($0.value)" }), they hold \(highest.sorted { $0.key < $1.key }.map { "\($0.key)#\($0.value)" })"
            )
        }
        for change in decoded.changes where !verifiedBefore.contains(change.id) {
            changes += 1
            if case .lifecycle = change.kind { log.lifecycle.insert(change.hash) }
            let node = CausalNode(change)
            log.graph.insert(node)
            added.append(node)
        }
        return highest
    }

    private mutating func checkFrontier(graph: CausalGraph, vector: VersionVector, in db: Database) throws {
        let frontier = try Frontier(documentRow: documentRow, in: db)
        if frontier.vector != vector {
            problem(nil, "the recorded vector \(frontier.vector) differs from the log's \(vector)")
        }
        let recordedHeads = Set(frontier.headHashes)
        let actualHeads = Set(graph.heads.map(\.hash))
        if recordedHeads != actualHeads {
            problem(
                nil,
                "the recorded heads \(recordedHeads.map(\.shortHex).sorted()) differ from the log's \(actualHeads.map(\.shortHex).sorted())"
            )
        }
        if let remembered, (remembered?.frontier.tips ?? [:]) != frontier.tips {
            problem(
                nil,
                "the frontier the store keeps in memory, \(remembered?.frontier.vector ?? VersionVector()), differs from the recorded \(frontier.vector)"
            )
        }
    }

    private mutating func checkPending(vector: VersionVector, in db: Database) throws {
        var rows = try RawRows(
            db.cachedStatement(
                sql: """
                    SELECT hash, body, vouched, size, wait_device, wait_seq FROM pending WHERE document = ?
                    ORDER BY device, seq
                    """),
            arguments: [documentRow])
        var count = 0
        while let row = try rows.next() {
            count += 1
            guard let change = try? Change(checking: row[1] as Data, document: document) else {
                problem(nil, "a waiting change cannot be decoded")
                continue
            }
            if change.hash != (row[0] as Data?).flatMap({ try? ColumnDecoder.changeHash($0) }) {
                problem(change.id, "the waiting change's bytes do not match its hash")
            }
            // The size counts against the bound on unvouched bytes (`StoreLimits.unvouchedBytes`).
            if (row[3] as Int) != (row[1] as Data).count {
                problem(
                    change.id,
                    "the waiting change records a size of \(row[3] as Int) bytes, but has \((row[1] as Data).count)")
            }
            let ready =
                change.id.seq == vector[change.id.device] + 1
                && change.vector.entries.allSatisfy { $0.device == change.id.device || $0.seq <= vector[$0.device] }
            // One that no signed head has reached yet waits for one, whatever it depends on.
            let vouched: Bool = row[2]
            // One vouched for through a head whose own change cannot enter yet is held: it waits on itself.
            let held = (row[4] as Data?) == change.id.device.uuid.data && (row[5] as Int64) == Int64(change.id.seq)
            if ready && vouched && !held {
                problem(change.id, "the change waits although everything it depends on is in the log")
            }
            if change.id.seq <= vector[change.id.device] {
                problem(change.id, "the change waits although it is in the log")
            }
        }
        let recorded = try Int.fetchOne(
            db.cachedStatement(sql: "SELECT waiting FROM document WHERE id = ?"), arguments: [documentRow])
        if recorded != count {
            problem(nil, "the document records \(recorded.map(String.init) ?? "no") waiting changes, but \(count) wait")
        }
        if let remembered, (remembered?.hasWaiting ?? false) != (count > 0) {
            problem(
                nil,
                "the store remembers the document \(count == 0 ? "with" : "without") waiting changes, but the pending table says otherwise"
            )
        }
    }
}
