import FolioCore

extension DocumentTypeRegistry {
    /// The types of the built-in models: text (`.txt`), records (`.folio-records`) and pages (a `.folio-pages`
    /// package).
    public static let builtIn = DocumentTypeRegistry([
        TextDocument.documentType, RecordsDocument.documentType, PagesDocument.documentType,
    ])
}
