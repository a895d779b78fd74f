extension DocumentType {
    /// Plain text (`.txt`), the type of FolioModels' `TextDocument`.
    public static let text = DocumentType(
        identifier: "com.folio.text", conformsTo: ["public.plain-text"], fileExtensions: ["txt"], isPackage: false)

    /// Records as JSON (`.folio-records`), the type of FolioModels' `RecordsDocument`.
    public static let records = DocumentType(
        identifier: "com.folio.records", conformsTo: ["public.json"], fileExtensions: ["folio-records"],
        isPackage: false)

    /// A package of text and images (`.folio-pages`), the type of FolioModels' `PagesDocument`.
    public static let pages = DocumentType(
        identifier: "com.folio.pages", conformsTo: ["com.apple.package"], fileExtensions: ["folio-pages"],
        isPackage: true)
}

extension DocumentTypeRegistry {
    /// The types of the built-in models: text (`.txt`), records (`.folio-records`) and pages (a `.folio-pages`
    /// package). Every `DocumentLibrary` knows them.
    public static let builtIn = DocumentTypeRegistry([.text, .records, .pages])
}
