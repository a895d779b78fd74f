/// A kind of document, as an app declares it (what CFBundleDocumentTypes and exported UTIs declare on Apple
/// platforms): an identifier, the identifiers it conforms to, its file extensions, and whether it is a file
/// package (a directory) or a flat file.
public struct DocumentType: Hashable, Sendable, CustomStringConvertible {
    /// A reverse-DNS identifier, such as `com.example.notes`.
    public var identifier: String
    /// Identifiers this type conforms to, such as `public.plain-text`.
    public var conformsTo: [String]
    /// File extensions without the dot, lowercase, the preferred one first.
    public var fileExtensions: [String]
    /// Whether documents of this type are directories (file packages) rather than flat files.
    public var isPackage: Bool

    /// Declares a type.
    ///
    /// - Precondition: `fileExtensions` is not empty.
    public init(identifier: String, conformsTo: [String] = [], fileExtensions: [String], isPackage: Bool = false) {
        precondition(!fileExtensions.isEmpty, "a document type needs at least one file extension")
        self.identifier = identifier
        self.conformsTo = conformsTo
        self.fileExtensions = fileExtensions.map { $0.lowercased() }
        self.isPackage = isPackage
    }

    /// The extension new documents get.
    public var preferredExtension: String { fileExtensions[0] }

    /// Whether this type is `identifier` or declares conformance to it.
    public func conforms(to identifier: String) -> Bool {
        self.identifier == identifier || conformsTo.contains(identifier)
    }

    /// The identifier.
    public var description: String { identifier }
}
