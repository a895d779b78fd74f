import FolioCore
import Foundation
import GRDB

/// What ``ChangeLogStore/verify()`` found.
public struct VerificationReport: Hashable, Sendable, CustomStringConvertible {
    /// One thing found wrong.
    public struct Problem: Hashable, Sendable, CustomStringConvertible {
        /// The document concerned, if any.
        public var document: DocumentID?
        /// The change concerned, if any.
        public var change: ChangeID?
        /// What is wrong.
        public var message: String

        /// `document change: message`.
        public var description: String {
            [document.map { "document \($0)" }, change.map { "change \($0)" }].compactMap { $0 }.joined(separator: " ")
                + (document == nil && change == nil ? "" : ": ") + message
        }
    }

    /// How many documents were checked.
    public var documents = 0
    /// How many changes were re-hashed and checked.
    public var changes = 0
    /// Everything found wrong, in a fixed order (document, then the log's order); empty when the store is sound.
    public var problems: [Problem] = []

    /// Whether nothing is wrong.
    public var isSound: Bool { problems.isEmpty }

    /// The first problem, the one to show a person.
    public var firstProblem: Problem? { problems.first }

    /// A one-line summary.
    public var description: String {
        if let first = firstProblem {
            return "\(problems.count) problem(s) in \(documents) documents, \(changes) changes; first: \(first)"
        }
        return "sound: \(documents) documents, \(changes) changes"
    }
}

extension ChangeLogStore {
    /// Checks the whole store: SQLite's own consistency, then every change re-hashed from its bytes and checked
    /// against its row, sequence numbers without gaps, parents present with lower lamports, vectors equal to
    /// their parents' merge, the derived frontier equal to what the log says, waiting changes still waiting for
    /// something, and every blob and checkpoint intact.
    ///
    /// Finding a problem is not an error: the report lists them, first bad change first.
    ///
    /// - Throws: ``StoreError`` only when the store cannot be read at all.
    /// - Complexity: O(n log n) time and O(n) memory for a document of n changes.
    /// - Parameter checkingPages: whether SQLite's own page check (`PRAGMA quick_check`) runs too; a caller that
    ///   checks after every operation may leave it to a final check.
    public func verify(checkingPages: Bool = true) throws(StoreError) -> VerificationReport {
        try verify(only: nil, checkingPages: checkingPages)
    }

    /// Checks the logs of `documents` only, as ``verify(checkingPages:)`` checks every document's: their changes
    /// re-hashed, sequence numbers, parents, vectors, frontier and waiting changes. The blob table and the other
    /// documents are left out, so a caller that checks after every operation pays for what the operation changed
    /// (a document whose vector did not move holds the same changes as when it was last checked); a full
    /// ``verify(checkingPages:)`` at the end covers the rest. Documents the store does not hold are skipped.
    ///
    /// - Parameter checkingPages: whether SQLite's `PRAGMA quick_check` runs too (the whole file's pages).
    public func verify(documents: some Sequence<DocumentID>, checkingPages: Bool = false) throws(StoreError) -> VerificationReport {
        try verify(only: Set(documents), checkingPages: checkingPages)
    }

    /// ``verify(checkingPages:)`` of `only` (`nil`: every document, and the blobs).
    private func verify(only: Set<DocumentID>?, checkingPages: Bool) throws(StoreError) -> VerificationReport {
        try read("verifying the store") { db in
            var report = VerificationReport()
            let integrity = checkingPages ? try String.fetchAll(db, sql: "PRAGMA quick_check") : ["ok"]
            if integrity != ["ok"] {
                report.problems.append(.init(message: "SQLite's quick_check reports: \(integrity.prefix(3).joined(separator: "; "))"))
            }
            if let only, only.isEmpty { return report }
            // Checking some documents reads their rows only; the whole check reads the device and document tables.
            var documents: [(row: Int64, id: DocumentID)] = []
            let deviceOf: (Int64) -> DeviceID?
            if let only {
                for id in only.sorted() {
                    if let row = try rowID(of: id, in: db, create: false) { documents.append((row, id)) }
                }
                deviceOf = { row in try? self.device(forRow: row, in: db) }
            } else {
                var deviceByRow: [Int64: DeviceID] = [:]
                var devices: [Device] = []
                for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT id, uuid, name FROM device")) {
                    let device = DeviceID(try Stored.uuid(row[1]))
                    deviceByRow[row[0]] = device
                    devices.append(Device(id: device, name: row[2] as String? ?? ""))
                }
                if let memory, memory.devices() != devices.sorted(by: { $0.id < $1.id }) {
                    report.problems.append(.init(message: "the devices the store keeps in memory differ from the device table"))
                }
                documents = try Row.fetchAll(db.cachedStatement(sql: "SELECT id, uuid FROM document")).map { row in
                    (row: row[0] as Int64, id: DocumentID(try Stored.uuid(row[1])))
                }
                .sorted { $0.id < $1.id }
                deviceOf = { deviceByRow[$0] }
            }
            for document in documents {
                report.documents += 1
                var checker = DocumentChecker(
                    document: document.id, documentRow: document.row, deviceOf: deviceOf,
                    remembered: memory.map { $0.document(document.row) })
                try checker.check(in: db)
                report.changes += checker.changes
                report.problems += checker.problems
            }
            guard only == nil else { return report }
            let rows = Set(documents.map(\.row))
            if let unknown = memory?.listedDocuments().first(where: { !rows.contains($0.frontier.documentRow) }) {
                report.problems.append(.init(document: unknown.document, message: "the store remembers a frontier of a document that is not in the file"))
            }
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT hash, bytes FROM blob ORDER BY hash")) {
                let recorded = (row[0] as Data?).flatMap { try? Stored.contentHash($0) }
                let bytes = (row[1] as Data?).flatMap { try? AtRest.unpackValue($0) }
                if recorded == nil || bytes.map(ContentHash.init(hashing:)) != recorded {
                    report.problems.append(.init(message: "blob \(recorded.map { String($0.hex.prefix(12)) } ?? "(damaged hash)") does not match its bytes"))
                }
            }
            let orphans = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM checkpoint WHERE contents_hash NOT IN (SELECT hash FROM blob)")) ?? 0
            if orphans > 0 {
                report.problems.append(.init(message: "\(orphans) checkpoint(s) have lost their contents"))
            }
            return report
        }
    }

    /// Throws when ``verify()`` finds any problem; tests call it after every operation.
    ///
    /// - Throws: ``StoreError`` with code `corrupt` naming the first problem.
    ///
    /// - Parameter checkingPages: see ``verify(checkingPages:)``.
    public func checkInvariants(checkingPages: Bool = true) throws(StoreError) {
        try Self.requireSound(try verify(checkingPages: checkingPages))
    }

    /// Throws when ``verify(documents:checkingPages:)`` finds any problem in `documents`.
    ///
    /// - Throws: ``StoreError`` with code `corrupt` naming the first problem.
    public func checkInvariants(of documents: some Sequence<DocumentID>, checkingPages: Bool = false) throws(StoreError) {
        try Self.requireSound(try verify(documents: documents, checkingPages: checkingPages))
    }

    private static func requireSound(_ report: VerificationReport) throws(StoreError) {
        if let first = report.firstProblem {
            throw StoreError(.corrupt, "the store breaks its invariants (\(report.problems.count) problem(s)); first: \(first)")
        }
    }
}

/// Verifies one document's log, frontier and pending changes.
private struct DocumentChecker {
    let document: DocumentID
    let documentRow: Int64
    /// The device of a row of the device table (`nil`: no such row).
    let deviceOf: (Int64) -> DeviceID?
    /// What the store remembers of the document, with exclusive access (`nil` then: nothing).
    let remembered: RememberedDocument??
    var changes = 0
    var problems: [VerificationReport.Problem] = []

    init(document: DocumentID, documentRow: Int64, deviceOf: @escaping (Int64) -> DeviceID?, remembered: RememberedDocument??) {
        self.document = document
        self.documentRow = documentRow
        self.deviceOf = deviceOf
        self.remembered = remembered
    }

    private mutating func problem(_ change: ChangeID?, _ message: String) {
        problems.append(.init(document: document, change: change, message: message))
    }

    mutating func check(in db: Database) throws {
        var graph = CausalGraph()
        var vector = VersionVector()
        var rows = try RawRows(
            db.cachedStatement(sql: "SELECT device, seq, lamport, hash, body, kind FROM change WHERE document = ? ORDER BY device, seq"),
            arguments: [documentRow])
        var previous: (device: Int64, seq: Int64)?
        var lifecycle: Set<ChangeHash> = []
        while let row = try rows.next() {
            changes += 1
            let deviceRow: Int64 = row[0]
            let seq: Int64 = row[1]
            guard let device = deviceOf(deviceRow), seq >= 1 else {
                problem(nil, "a change row names unknown device row \(deviceRow) or seq \(seq)")
                continue
            }
            let id = ChangeID(device: device, seq: UInt64(seq))
            let expectedSeq = previous?.device == deviceRow ? previous!.seq + 1 : 1
            if seq != expectedSeq { problem(id, "sequence numbers of \(device) jump from \(expectedSeq - 1) to \(seq)") }
            previous = (deviceRow, seq)
            let change: Change
            do {
                change = try Stored.change(row[4], document: document)
            } catch {
                problem(id, "its bytes cannot be decoded: \(error)")
                continue
            }
            if change.id != id { problem(id, "its bytes say it is \(change.id)") }
            let recorded = (row[3] as Data?).flatMap { try? Stored.changeHash($0) }
            if change.hash != recorded {
                problem(id, "its bytes hash to \(change.hash.shortHex), not to the recorded \(recorded?.shortHex ?? "(damaged hash)"): the row was altered")
            }
            if change.lamport != UInt64(row[2] as Int64) { problem(id, "its lamport column disagrees with its bytes") }
            if Int64(change.kind.tag) != row[5] as Int64 { problem(id, "its kind column disagrees with its bytes") }
            if case .lifecycle = change.kind { lifecycle.insert(change.hash) }
            vector.include(change.id)
            graph.insert(CausalNode(change))
        }
        if let inconsistency = graph.firstInconsistency() { problem(nil, inconsistency) }
        if let remembered = remembered??.lifecycle, Set(remembered.map(\.hash)) != lifecycle {
            problem(nil, "the lifecycle changes the store keeps in memory (\(remembered.count)) differ from the log's (\(lifecycle.count))")
        }
        try checkFrontier(graph: graph, vector: vector, in: db)
        try checkPending(vector: vector, in: db)
    }

    private mutating func checkFrontier(graph: CausalGraph, vector: VersionVector, in db: Database) throws {
        let frontier = try Frontier(documentRow: documentRow, in: db)
        if frontier.vector != vector {
            problem(nil, "the recorded vector \(frontier.vector) differs from the log's \(vector)")
        }
        let recordedHeads = Set(frontier.headHashes)
        let actualHeads = Set(graph.heads.map(\.hash))
        if recordedHeads != actualHeads {
            problem(nil, "the recorded heads \(recordedHeads.map(\.shortHex).sorted()) differ from the log's \(actualHeads.map(\.shortHex).sorted())")
        }
        if let remembered, (remembered?.frontier.tips ?? [:]) != frontier.tips {
            problem(nil, "the frontier the store keeps in memory, \(remembered?.frontier.vector ?? VersionVector()), differs from the recorded \(frontier.vector)")
        }
    }

    private mutating func checkPending(vector: VersionVector, in db: Database) throws {
        var rows = try RawRows(
            db.cachedStatement(sql: "SELECT hash, body FROM pending WHERE document = ? ORDER BY device, seq"), arguments: [documentRow])
        var count = 0
        while let row = try rows.next() {
            count += 1
            guard let change = try? Change(decoding: row[1] as Data, document: document) else {
                problem(nil, "a waiting change cannot be decoded")
                continue
            }
            if change.hash != (row[0] as Data?).flatMap({ try? Stored.changeHash($0) }) { problem(change.id, "the waiting change's bytes do not match its hash") }
            let ready = change.id.seq == vector[change.id.device] + 1
                && change.vector.entries.allSatisfy { $0.device == change.id.device || $0.seq <= vector[$0.device] }
            if ready { problem(change.id, "the change waits although everything it depends on is in the log") }
            if change.id.seq <= vector[change.id.device] { problem(change.id, "the change waits although it is in the log") }
        }
        if let remembered, (remembered?.hasWaiting ?? false) != (count > 0) {
            problem(nil, "the store remembers the document \(count == 0 ? "with" : "without") waiting changes, but the pending table says otherwise")
        }
    }
}
