import FolioCore

/// Why a report could not be made or read.
public typealias ReportError = FolioError<ReportErrorCode>

/// The kinds of ``ReportError``; more kinds may be added.
public struct ReportErrorCode: FolioErrorCode {
    /// The directory is not a Folio library (it has no `.folio/store.sqlite`, or that file is not a store).
    public static let notALibrary = Self(description: "notALibrary")
    /// The library exists but could not be read; see ``ReportError/cause``.
    public static let unreadable = Self(description: "unreadable")
    /// Text given as a JSON report is not one.
    public static let invalidJSON = Self(description: "invalidJSON")
    /// A JSON report of a schema version newer than this build knows.
    public static let newerSchema = Self(description: "newerSchema")

    /// The code's name.
    public let description: String
}
