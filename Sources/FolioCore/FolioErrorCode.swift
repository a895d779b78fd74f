/// A kind of problem one module reports, as the ``FolioError/code`` of its errors.
///
/// A module's codes are a struct of static values (`StoreErrorCode.corrupt`, `SaveErrorCode.noSpace`…), so more
/// kinds can be added without breaking a caller's `switch`, which must have a `default`.
public protocol FolioErrorCode: Hashable, Sendable, CustomStringConvertible {
    /// What locates an error of this kind: by default the line of Folio that raised it.
    associatedtype Location: Hashable & Sendable = SourceLine

    /// The error in one line. By default its message, then its cause after a colon.
    static func describe(_ error: FolioError<Self>) -> String
}

extension FolioErrorCode {
    /// The message, then the cause after a colon when there is one.
    public static func describe(_ error: FolioError<Self>) -> String {
        guard let cause = error.cause else { return error.message }
        return "\(error.message): \(cause)"
    }
}
