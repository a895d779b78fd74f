import FolioCore
import Foundation
import GRDB

extension ChangeLogStore {
    /// Checks the whole store: SQLite's own consistency, then every change re-hashed from its bytes and checked
    /// against its row, sequence numbers without gaps, parents present with lower lamports, vectors equal to
    /// their parents' merge, the derived frontier equal to what the log says, waiting changes still waiting for
    /// something with their recorded sizes, the running total of unvouched bytes, and every blob and checkpoint
    /// intact.
    ///
    /// Finding a problem is not an error: the report lists them, first bad change first.
    ///
    /// - Complexity: O(n log n) time and O(n) memory for a document of n changes.
    /// - Parameter checkingPages: whether SQLite's own page check (`PRAGMA quick_check`) runs too; a caller that
    ///   checks after every operation may leave it to a final check.
    /// - Throws: ``StoreError`` only when the store cannot be read at all.
    public func verify(checkingPages: Bool = true) throws(StoreError) -> VerificationReport {
        var logs: [DocumentID: VerifiedLog]?
        return try verify(only: nil, checkingPages: checkingPages, logs: &logs)
    }

    /// Checks the logs of `documents` only, as ``verify(checkingPages:)`` checks every document's: their changes
    /// re-hashed, sequence numbers, parents, vectors, frontier and waiting changes. The blob table and the other
    /// documents are left out, so a caller that checks after every operation pays for what the operation changed
    /// (a document whose vector did not move holds the same changes as when it was last checked); a full
    /// ``verify(checkingPages:)`` at the end covers the rest. Documents the store does not hold are skipped.
    ///
    /// - Parameters:
    ///   - documents: the documents to check.
    ///   - checkingPages: whether SQLite's `PRAGMA quick_check` runs too (the whole file's pages).
    /// - Throws: ``StoreError``.
    public func verify(documents: some Sequence<DocumentID>, checkingPages: Bool = false) throws(StoreError)
        -> VerificationReport
    {
        var logs: [DocumentID: VerifiedLog]?
        return try verify(only: Set(documents), checkingPages: checkingPages, logs: &logs)
    }

    /// Checks the logs of `documents` as ``verify(documents:checkingPages:)`` does, but only what was added to each
    /// since `progress` last saw it sound: those changes are decoded, re-hashed and checked against their parents;
    /// the ones verified before are not read again, beyond their identities (so a change gone missing, or a gap, is
    /// still found); the frontier and the waiting changes are checked in full. A caller that checks after every
    /// operation pays for what the operation added, not for the history.
    ///
    /// A document seen for the first time is checked in full. A document found with a problem is forgotten by
    /// `progress`, so its next check is a full one. A change altered after it was verified is found by a full
    /// ``verify(checkingPages:)``, not by this one.
    ///
    /// - Parameters:
    ///   - documents: the documents to check.
    ///   - progress: what earlier calls verified, for this store (a progress made with another store, told apart by
    ///     ``url``, is started over); updated with what this call verified.
    /// - Complexity: O(n) rows read and O(k log k) for the k changes added, for a document of n changes.
    /// - Throws: ``StoreError``.
    public func verify(
        documents: some Sequence<DocumentID>, continuing progress: inout VerificationProgress
    ) throws -> VerificationReport {
        if progress.store != url { progress = VerificationProgress(store: url) }
        // Taken out while the check runs, so that the graphs it extends are not copied.
        var logs: [DocumentID: VerifiedLog]? = progress.logs
        progress.logs = [:]
        defer { progress.logs = logs ?? [:] }
        return try verify(only: Set(documents), checkingPages: false, logs: &logs)
    }

    /// ``verify(checkingPages:)`` of `only` (`nil`: every document, and the blobs). With `logs`, each document's
    /// check starts from its entry there, and what is sound afterwards is put back.
    private func verify(
        only: Set<DocumentID>?, checkingPages: Bool, logs: inout [DocumentID: VerifiedLog]?
    ) throws(StoreError) -> VerificationReport {
        try read("verifying the store") { db in
            var report = VerificationReport()
            let integrity = checkingPages ? try String.fetchAll(db, sql: "PRAGMA quick_check") : ["ok"]
            if integrity != ["ok"] {
                report.problems.append(
                    .init(message: "SQLite's quick_check reports: \(integrity.prefix(3).joined(separator: "; "))"))
            }
            if let only, only.isEmpty { return report }
            // Checking some documents reads their rows only; the whole check reads the device and document tables.
            var documents: [(row: Int64, id: DocumentID)] = []
            let deviceOf: (Int64) -> DeviceID?
            if let only {
                for id in only.sorted() {
                    if let row = try rowID(of: id, in: db) { documents.append((row, id)) }
                }
                var deviceByRow: [Int64: DeviceID] = [:]
                deviceOf = { row in
                    if let device = deviceByRow[row] { return device }
                    let device = try? self.device(forRow: row, in: db)
                    deviceByRow[row] = device
                    return device
                }
            } else {
                var deviceByRow: [Int64: DeviceID] = [:]
                var devices: [Device] = []
                for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT id, uuid, name, person FROM device")) {
                    let device = DeviceID(try ColumnDecoder.uuid(row[1]))
                    deviceByRow[row[0]] = device
                    devices.append(Device(id: device, name: row[2] as String? ?? "", person: row[3] as String? ?? ""))
                }
                if let exclusiveCache, exclusiveCache.devices() != devices.sorted(by: { $0.id < $1.id }) {
                    report.problems.append(
                        .init(message: "the devices the store keeps in memory differ from the device table"))
                }
                documents = try Row.fetchAll(db.cachedStatement(sql: "SELECT id, uuid FROM document")).map { row in
                    (row: row[0] as Int64, id: DocumentID(try ColumnDecoder.uuid(row[1])))
                }
                .sorted { $0.id < $1.id }
                deviceOf = { deviceByRow[$0] }
            }
            for document in documents {
                report.documents += 1
                var checker = DocumentChecker(
                    document: document.id, documentRow: document.row, deviceOf: deviceOf,
                    remembered: exclusiveCache.map { $0.document(document.row) },
                    verified: logs?.removeValue(forKey: document.id) ?? VerifiedLog())
                try checker.check(in: db)
                report.changes += checker.changes
                report.problems += checker.problems
                if checker.problems.isEmpty { logs?[document.id] = checker.log }
            }
            guard only == nil else { return report }
            let rows = Set(documents.map(\.row))
            if let unknown = exclusiveCache?.listedDocuments().first(where: { !rows.contains($0.frontier.documentRow) })
            {
                report.problems.append(
                    .init(
                        document: unknown.document,
                        message: "the store remembers a frontier of a document that is not in the file"))
            }
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT hash, bytes FROM blob ORDER BY hash")) {
                let recorded = (row[0] as Data?).flatMap { try? ColumnDecoder.contentHash($0) }
                let bytes = (row[1] as Data?).flatMap { try? StorageCompression.unpackValue($0) }
                if recorded == nil || bytes.map(ContentHash.init(hashing:)) != recorded {
                    report.problems.append(
                        .init(
                            message:
                                "blob \(recorded.map { String($0.hex.prefix(12)) } ?? "(damaged hash)") does not match its bytes"
                        ))
                }
            }
            let unvouched = try Self.unvouchedTotal(in: db)
            let counted =
                try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT coalesce(sum(size), 0) FROM pending WHERE vouched = 0")) ?? 0
            if unvouched != counted {
                report.problems.append(
                    .init(
                        message:
                            "the store records \(unvouched) bytes of unvouched waiting changes, but \(counted) wait"))
            }
            // Each document's count of unvouched waiting changes, which the triggers keep, against the rows.
            for row in try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT d.uuid, d.unvouched, (SELECT count(*) FROM pending p WHERE p.document = d.id AND p.vouched = 0)
                        FROM document d WHERE d.unvouched <> (
                            SELECT count(*) FROM pending p WHERE p.document = d.id AND p.vouched = 0)
                        ORDER BY d.id
                        """))
            {
                let document = (try? ColumnDecoder.uuid(row[0])).map { "\(DocumentID($0))" } ?? "(damaged identity)"
                report.problems.append(
                    .init(
                        message:
                            "document \(document) records \(row[1] as Int) unvouched waiting changes, but \(row[2] as Int) wait"
                    ))
            }
            let orphans =
                try Int.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT COUNT(*) FROM checkpoint
                            WHERE coalesce(manifest_hash, contents_hash) NOT IN (SELECT hash FROM blob)
                            """)) ?? 0
            if orphans > 0 {
                report.problems.append(
                    .init(
                        message: orphans == 1
                            ? "1 checkpoint has lost its contents" : "\(orphans) checkpoints have lost their contents"))
            }
            // A checkpoint stored as a manifest: its files put back together give the contents it names.
            for row in try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT c.contents_hash, m.bytes, d.uuid, c.id FROM checkpoint c
                        JOIN blob m ON m.hash = c.manifest_hash JOIN document d ON d.id = c.document ORDER BY c.id
                        """))
            {
                let expected = try? ColumnDecoder.contentHash(row[0])
                let contents = try? CheckpointStore.contents(whole: nil, manifest: .some(row[1] as Data?), in: db)
                let document = (try? ColumnDecoder.uuid(row[2])).map { DocumentID($0) }
                if expected == nil || contents.flatMap({ $0 }).map(ContentHash.init(hashing:)) != expected {
                    report.problems.append(
                        .init(
                            document: document,
                            message: "a checkpoint stored as a manifest has lost or damaged files or its manifest"))
                }
                // The files it names are listed, so that they stay while it does.
                let named = (row[1] as Data?).flatMap { try? StorageCompression.unpackValue($0) }
                    .flatMap { try? CheckpointManifest(decoding: $0) }.map { Set($0.members.map(\.hash.data)) }
                let listed = Set(
                    try Data.fetchAll(
                        db.cachedStatement(sql: "SELECT hash FROM checkpoint_file WHERE checkpoint = ?"),
                        arguments: [row[3] as Int64]))
                if let named, named != listed {
                    report.problems.append(
                        .init(document: document, message: "a checkpoint's list of files differs from its manifest"))
                }
            }
            return report
        }
    }

    /// Throws when ``verify(checkingPages:)`` finds any problem; tests call it after every operation.
    ///
    ///
    /// - Parameter checkingPages: see ``verify(checkingPages:)``.
    /// - Throws: ``StoreError`` with code `corrupt` naming the first problem.
    package func checkInvariants(checkingPages: Bool = true) throws {
        try Self.requireSound(try verify(checkingPages: checkingPages))
    }

    /// Throws when ``verify(documents:checkingPages:)`` finds any problem in `documents`.
    ///
    /// - Throws: ``StoreError`` with code `corrupt` naming the first problem.
    package func checkInvariants(of documents: some Sequence<DocumentID>, checkingPages: Bool = false) throws {
        try Self.requireSound(try verify(documents: documents, checkingPages: checkingPages))
    }

    /// Throws when ``verify(documents:continuing:)`` finds any problem in what was added to `documents` since
    /// `progress` last saw them.
    ///
    /// - Throws: ``StoreError`` with code `corrupt` naming the first problem.
    package func checkInvariants(
        of documents: some Sequence<DocumentID>, continuing progress: inout VerificationProgress
    ) throws {
        try Self.requireSound(try verify(documents: documents, continuing: &progress))
    }

    private static func requireSound(_ report: VerificationReport) throws(StoreError) {
        if let first = report.firstProblem {
            throw StoreError(
                .corrupt,
                "the store breaks its invariants (\(report.problems.count) problem\(report.problems.count == 1 ? "" : "s")); first: \(first)"
            )
        }
    }
}
