import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import Foundation

extension ConflictReport {
    /// The conflict-inspection report of a library directory (`folio inspect DIR`): every document, deleted ones
    /// included, as the library's own device holds it, with its conflicts, losses and causal graph; the outcome
    /// says whether the store verifies as sound.
    ///
    /// The library is opened as the device its store was created for (``ChangeLogStore/firstDevice(ofStoreAt:)``),
    /// so no new device is registered, with the `askUser` policy and manual autosave, so that inspecting settles no
    /// conflict and saves no file. Opening a document still does what any open does: it cleans up after an
    /// interrupted save and records a file changed on disk by another program; closing takes a checkpoint.
    ///
    /// - Parameters:
    ///   - url: the library directory; the report's `source` is its path as given.
    ///   - title: the report's title; by default `Library NAME`.
    /// - Throws: ``ReportError`` `.notALibrary` when `url` holds no Folio store, `.unreadable` when the library
    ///   cannot be opened or read.
    public static func inspect(libraryAt url: URL, title: String? = nil) async throws(ReportError) -> ConflictReport {
        let storeURL = url.appendingPathComponent(".folio/store.sqlite")
        let owner: Device?
        do {
            owner = try ChangeLogStore.firstDevice(ofStoreAt: storeURL)
        } catch {
            throw ReportError(.notALibrary, "\(url.path) is not a Folio library: \(error.message)", cause: error)
        }
        guard let owner else {
            throw ReportError(.notALibrary, "\(url.path) is not a Folio library: it has no .folio/store.sqlite")
        }
        let library: DocumentLibrary
        let captures: [DocumentCapture]
        let verification: VerificationReport
        do {
            library = try DocumentLibrary(
                at: url, device: owner,
                types: DocumentTypeRegistry([TextDocument.documentType, RecordsDocument.documentType, PagesDocument.documentType]),
                autosave: .manual, conflictPolicy: ConflictPolicy(default: .askUser), backgroundWork: false)
            captures = try await DocumentCapture.captures(of: library)
        } catch {
            throw ReportError(.unreadable, "cannot read the library at \(url.path)", cause: error)
        }
        do {
            verification = try library.store.verify()
            try library.store.close()
        } catch {
            throw ReportError(.unreadable, "cannot verify the store of the library at \(url.path)", cause: error)
        }
        let assembler = ReportAssembler(captures: captures, devices: [owner])
        return ConflictReport(
            title: title ?? "Library \(url.lastPathComponent)", kind: .library, source: url.relativePath,
            outcome: Outcome(failures: verification.problems.map { Failure(message: $0.description) }),
            devices: assembler.devices, documents: assembler.documents())
    }
}
