import FolioConflicts
import FolioCore
import FolioDocuments
import FolioModels
import Foundation

extension DocumentCapture {
    /// Captures every document of `library`, deleted ones included, by opening each as its built-in model
    /// (`TextDocument`, `RecordsDocument`, `PagesDocument`), capturing it and closing it; a document of another
    /// type is captured from its log (``capture(logOf:in:)``). `others` names documents the library may lack:
    /// those it does not hold are captured as ``absent(_:on:)``.
    ///
    /// Opening a document applies the library's conflict policy, as any open does: open the library with
    /// `ConflictPolicy(default: .askUser)` and `AutosavePolicy.manual` so that capturing settles nothing and
    /// saves nothing. Capture documents that are already open elsewhere with ``capture(_:)`` instead.
    ///
    /// - Returns: the captures, in the order of the documents' identities.
    /// - Throws: ``DocumentError`` when a document cannot be opened or read.
    public static func captures(of library: DocumentLibrary, including others: [DocumentID] = []) async throws
        -> [DocumentCapture]
    {
        let held = try await library.documents(includingDeleted: true)
        var captures: [DocumentCapture] = []
        for id in Array(Set(held.map(\.id) + others)).sorted() {
            guard let info = held.first(where: { $0.id == id }) else {
                captures.append(.absent(id, on: library.device))
                continue
            }
            switch info.typeIdentifier {
            case TextDocument.documentType.identifier:
                captures.append(try await opening(id, as: TextDocument.self, in: library))
            case RecordsDocument.documentType.identifier:
                captures.append(try await opening(id, as: RecordsDocument.self, in: library))
            case PagesDocument.documentType.identifier:
                captures.append(try await opening(id, as: PagesDocument.self, in: library))
            default: captures.append(try await capture(logOf: id, in: library))
            }
        }
        return captures
    }

    private static func opening<Model: DocumentModel>(
        _ id: DocumentID, as model: Model.Type, in library: DocumentLibrary
    ) async throws -> DocumentCapture {
        let document = try await library.open(id, as: model)
        let captured: DocumentCapture
        do {
            captured = try await capture(document)
        } catch {
            try? await document.close()
            throw error
        }
        try await document.close()
        return captured
    }
}
