/// The document types an app handles, found by identifier or by file extension.
public struct DocumentTypeRegistry: Sendable {
    private var byIdentifier: [String: DocumentType] = [:]
    private var byExtension: [String: String] = [:]
    private var order: [String] = []

    /// A registry holding `types`; the first registered wins an extension claimed twice.
    public init(_ types: [DocumentType] = []) {
        for type in types { register(type) }
    }

    /// Adds a type (replacing one with the same identifier).
    public mutating func register(_ type: DocumentType) {
        if byIdentifier[type.identifier] == nil { order.append(type.identifier) }
        byIdentifier[type.identifier] = type
        for fileExtension in type.fileExtensions where byExtension[fileExtension] == nil {
            byExtension[fileExtension] = type.identifier
        }
    }

    /// The registered types, in registration order.
    public var types: [DocumentType] { order.compactMap { byIdentifier[$0] } }

    /// The type with this identifier.
    public func type(identifier: String) -> DocumentType? { byIdentifier[identifier] }

    /// The type claiming this file extension (without the dot, any case).
    public func type(forExtension fileExtension: String) -> DocumentType? {
        byExtension[fileExtension.lowercased()].flatMap { byIdentifier[$0] }
    }

    /// The type of a file name, by its extension.
    public func type(forFileName name: String) -> DocumentType? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return type(forExtension: String(name[name.index(after: dot)...]))
    }
}
