import FolioCore

/// Why the server could not do what was asked: open its data, issue or revoke a token, serve a library.
public typealias ServerError = FolioError<ServerErrorCode>

/// The kinds of ``ServerError``; more kinds may be added.
public struct ServerErrorCode: FolioErrorCode {
    /// The server's data directory or one of its databases could not be read or written.
    public static let storage = Self(description: "storage")
    /// A name (library, account) or token id is not acceptable: empty, too long, or with characters outside the
    /// allowed set.
    public static let invalidName = Self(description: "invalidName")
    /// The named token or library does not exist.
    public static let notFound = Self(description: "notFound")
    /// The library already belongs to another account.
    public static let conflict = Self(description: "conflict")
    /// The server could not start (an address that cannot be bound, say).
    public static let startup = Self(description: "startup")

    /// The code's name.
    public let description: String
}
