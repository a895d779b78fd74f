/// Why a model refused contents or an operation.
public typealias ModelError = FolioError<ModelErrorCode>

/// The kinds of ``ModelError``; more kinds may be added.
public struct ModelErrorCode: FolioErrorCode {
    /// The snapshot cannot be loaded by this model (wrong form, bad encoding, missing members).
    public static let invalidContents = Self(description: "invalidContents")
    /// The operation does not apply to the current state (out of range, unknown record…); nothing changed.
    public static let invalidOperation = Self(description: "invalidOperation")

    /// The code's name.
    public let description: String
}
