import FolioConflicts
import FolioCore
import FolioDocuments
import FolioStore
import Foundation

/// One device's view of one document at one moment: what ``DocumentReport/assemble(_:devices:)`` merges, across
/// devices, into a report.
///
/// Devices are kept by identity until assembly, which names them once for the whole report (a store may know a
/// peer only by its identity).
public struct DocumentCapture: Hashable, Sendable {
    /// A competing version as captured.
    struct Version: Hashable, Sendable {
        var head: Change
        var heads: [ChangeHash]
        var isCurrent: Bool
        var changes: [ChangeEntry]
        var contents: [String]
    }

    /// A stretch of a text and the change that typed it.
    struct Stretch: Hashable, Sendable {
        var text: String
        var change: ChangeID?
    }

    /// Who wrote the text is left out of a report for a document with more changes than this: it costs a replay of
    /// the whole history.
    static var authorshipChangeLimit: Int { 100_000 }

    /// A conflict as captured: open (no resolution) or settled.
    struct Conflict: Hashable, Sendable {
        var versions: [Version]
        var ancestor: Change?
        var resolution: Change?
        /// For an open conflict, the policy that left it open.
        var policy: String?
    }

    /// The document.
    public let document: DocumentID
    /// The device whose view this is.
    public let device: Device
    /// Whether the device holds the document, not deleted.
    public let exists: Bool
    /// Whether the device has the document's log at all.
    public var isKnown: Bool { !changes.isEmpty }

    var name: String
    var type: String
    var state: [String]
    var vector: VersionVector
    var heads: [ChangeHash]
    var contents: [String]
    /// Who wrote the text the device shows, stretch by stretch (``Document/blame()``); `nil` for a model without a
    /// text that merges character by character, or a document not opened or with edits not yet committed.
    var authorship: [Stretch]?
    var conflicts: [Conflict]
    var changes: [Change]
    var knownDevices: [Device]

    /// The capture of a document the device does not hold: it never received it.
    public static func absent(_ document: DocumentID, on device: Device) -> DocumentCapture {
        DocumentCapture(
            document: document, device: device, exists: false, name: "", type: "", state: ["absent"],
            vector: VersionVector(), heads: [], contents: [], authorship: nil, conflicts: [], changes: [],
            knownDevices: [])
    }

    /// Captures an open document as its library's device sees it: state, contents, vector and heads, its open
    /// conflict, every conflict its log records as settled, and its causal graph. Reads only; a closed document is
    /// captured from its log without its open conflict.
    ///
    /// - Throws: ``DocumentError`` when the log cannot be read.
    public static func capture<Model: DocumentModel>(_ document: Document<Model>) async throws -> DocumentCapture {
        let snapshot = try await document.reportSnapshot()
        let library = document.library
        let store = library.store
        let conflicts =
            snapshot.history.map { conflict($0, policy: nil) }
            + (snapshot.open.map {
                [conflict($0, policy: library.conflictPolicy.strategy(for: Model.documentType).description)]
            } ?? [])
        do {
            return DocumentCapture(
                document: document.id, device: library.device, exists: !snapshot.info.isDeleted,
                name: snapshot.info.displayName, type: snapshot.info.typeIdentifier,
                state: ReportLines.flags(snapshot.state),
                vector: try store.vector(of: document.id), heads: try store.heads(of: document.id).map(\.hash),
                contents: ReportLines.contents(of: snapshot.model), authorship: snapshot.authorship,
                conflicts: conflicts,
                changes: try store.changes(of: document.id), knownDevices: try store.devices.all())
        } catch {
            throw DocumentError(
                .store, "the change log failed while reading the log of \(snapshot.info.displayName)", cause: error)
        }
    }

    /// Captures a document from its library's log alone, without opening it (a document the device holds but has
    /// not opened, or of a type this build cannot open): its name, vector, heads and graph, state `unopened`, and
    /// no contents or conflicts.
    ///
    /// Runs off the caller's thread (it reads the store).
    ///
    /// - Throws: ``DocumentError`` `.notFound` when the library has no such document, `.store`.
    public static func capture(
        logOf document: DocumentID, in library: DocumentLibrary
    ) async throws(DocumentError) -> DocumentCapture {
        try await library.offThePool { () throws(DocumentError) in try captureNow(logOf: document, in: library) }
    }

    /// What ``capture(logOf:in:)`` returns, read on the caller's thread.
    private static func captureNow(
        logOf document: DocumentID, in library: DocumentLibrary
    ) throws(DocumentError) -> DocumentCapture {
        guard let info = try library.catalogInfo(of: document) else {
            throw DocumentError(.notFound, "no document \(document) in the library at \(library.root.path)")
        }
        let store = library.store
        do {
            return DocumentCapture(
                document: document, device: library.device, exists: !info.isDeleted, name: info.displayName,
                type: info.typeIdentifier, state: ["unopened"], vector: try store.vector(of: document),
                heads: try store.heads(of: document).map(\.hash),
                contents: [], authorship: nil, conflicts: [],
                changes: try store.changes(of: document), knownDevices: try store.devices.all())
        } catch {
            throw DocumentError(
                .store, "the change log failed while reading the log of \(info.displayName)", cause: error)
        }
    }

    private static func conflict<Model>(_ record: ConflictRecord<Model>, policy: String?) -> Conflict {
        Conflict(
            versions: record.versions.map { version in
                Version(
                    head: version.head, heads: version.heads, isCurrent: version.isCurrent,
                    changes: version.changes.map(ReportLines.entry),
                    contents: ReportLines.contents(of: version.contents))
            },
            ancestor: record.ancestor, resolution: record.resolution, policy: policy)
    }
}

/// What a document holds at one moment, read in one turn of its actor.
struct ReportSnapshot<Model: DocumentModel>: Sendable {
    var info: DocumentInfo
    var state: DocumentState
    var model: Model
    var open: ConflictRecord<Model>?
    var history: [ConflictRecord<Model>]
    var authorship: [DocumentCapture.Stretch]?
}

extension Document {
    /// Who typed each stretch of the text, when the report can say (see ``DocumentCapture/authorshipChangeLimit``);
    /// a failure to say leaves it out rather than failing the report.
    func authorship() -> [DocumentCapture.Stretch]? {
        guard let changes = try? library.store.vector(of: id).changeCount,
            changes <= DocumentCapture.authorshipChangeLimit,
            let stretches = try? blameOfCommittedText()
        else { return nil }
        return stretches.map { DocumentCapture.Stretch(text: $0.text, change: $0.change) }
    }

    func reportSnapshot() throws -> ReportSnapshot<Model> {
        let open = state.contains(.closed) ? nil : try unresolvedConflict()
        return ReportSnapshot(
            info: info, state: state, model: model, open: open, history: try conflictHistory(),
            authorship: authorship())
    }
}
