import FolioCore
import FolioDocuments
import FolioModels
import FolioReports
import Foundation

/// What an `expect` step (and the convergence check) reads of one document on one device.
struct DocumentObservation: Equatable {
    var displayName: String
    var isDeleted: Bool
    var state: DocumentState
    /// How many versions compete: 0 without a conflict.
    var conflictVersions: Int
    var contents: Data
    var text: String?
    var records: [String: [String: String]]?
    var images: Set<String>?
}

/// One device's open document of some built-in model, driven by scenario steps.
protocol SimulatedDocument: AnyObject, Sendable {
    var id: DocumentID { get }
    var scenarioModel: Scenario.Model { get }
    func edit(_ operation: Scenario.Operation, bytes: ImageBytes) async throws
    func undo() async throws
    func redo() async throws
    func save() async throws
    func close() async throws
    /// Picks up what sync brought (strategies run here); returns whether the model changed.
    func refresh() async throws -> Bool
    func runDueWork() async throws
    /// Settles the open conflict; returns what happened, for the timeline.
    func resolve(_ choice: Scenario.Choice) async throws -> String
    func observe() async throws -> DocumentObservation
    /// The document's name (cheap: no contents, no versions).
    func displayName() async -> String
    /// Whether the document is in conflict (cheap: the state flag).
    func isInConflict() async -> Bool
    /// The device's view of the document, for the report.
    func capture() async throws -> DocumentCapture
    /// The document's history (`Document.history()`).
    func history() async throws -> [HistoryVersion]
    func restore(_ version: HistoryVersion) async throws
    func markVersion(_ name: String) async throws
    /// How many entries the loss ledger holds.
    func lossCount() async throws -> Int
}

/// A ``SimulatedDocument`` over a `Document<Model>`.
final class DocumentHandle<Model: SimulatedModel>: SimulatedDocument {
    let document: Document<Model>

    init(_ document: Document<Model>) {
        self.document = document
    }

    var id: DocumentID { document.id }
    var scenarioModel: Scenario.Model { Model.scenarioModel }

    func edit(_ operation: Scenario.Operation, bytes: ImageBytes) async throws {
        try await document.edit(Model.operation(operation, bytes: bytes))
    }

    func undo() async throws { try await document.undo() }
    func redo() async throws { try await document.redo() }
    func save() async throws { _ = try await document.save() }
    func close() async throws { try await document.close() }
    func refresh() async throws -> Bool { try await document.refresh() }
    func runDueWork() async throws { try await document.runDueWork() }
    func isInConflict() async -> Bool { await document.state.contains(.inConflict) }
    func capture() async throws -> DocumentCapture { try await DocumentCapture.capture(document) }
    func history() async throws -> [HistoryVersion] { try await document.history() }
    func restore(_ version: HistoryVersion) async throws { try await document.restore(version) }
    func markVersion(_ name: String) async throws { try await document.markVersion(name) }
    func lossCount() async throws -> Int { try await document.lossLedger().count }

    func resolve(_ choice: Scenario.Choice) async throws -> String {
        guard await document.state.contains(.inConflict) else { return "nothing to resolve" }
        switch choice {
        case .device(let name):
            let versions = try await document.versions()
            guard let version = versions.last(where: { $0.savingDevice.name == name }) else {
                let by = versions.map { $0.savingDevice.name }.joined(separator: ", ")
                throw DocumentError(.notFound, "no competing version was last written by \(name) (versions by \(by))")
            }
            try await document.replace(with: version)
            return "kept \(name)'s version"
        case .latest:
            try await document.resolve(.latest)
            return "kept the latest version"
        case .merge:
            guard let result = try await document.resolveByMerging() else { return "the model cannot merge" }
            return result.isClean
                ? "merged the versions"
                : "merge left \(result.conflicts.count) conflicting part\(result.conflicts.count == 1 ? "" : "s") for the user"
        case .keepBoth:
            let copies = try await document.resolveByKeepingBoth()
            return "kept both: \(copies.count) cop\(copies.count == 1 ? "y" : "ies") made"
        }
    }

    func observe() async throws -> DocumentObservation {
        let state = await document.state
        let info = await document.info
        let model = await document.model
        let versions = state.contains(.inConflict) ? try await document.versionCount() : 0
        var observation = DocumentObservation(
            displayName: info.displayName, isDeleted: info.isDeleted, state: state, conflictVersions: versions,
            contents: model.contents().encoded())
        switch model {
        case let text as TextDocument:
            observation.text = text.text
        case let records as RecordsDocument:
            observation.records = Dictionary(
                records.records.map { ($0.id, $0.fields) }, uniquingKeysWith: { first, _ in first })
        case let pages as PagesDocument:
            observation.text = pages.text
            observation.images = Set(pages.images.keys)
        default:
            break
        }
        return observation
    }

    func displayName() async -> String {
        await document.info.displayName
    }
}
