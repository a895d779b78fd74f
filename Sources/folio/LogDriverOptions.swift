import ArgumentParser
import FolioCore
import FolioStore

/// The help a test driver of `folio log` gives for the options of ``LogDriverOptions``: each says what the command
/// does with the device and the document.
protocol LogDriverHelp {
    /// The help of `--device`.
    static var deviceHelp: ArgumentHelp { get }
    /// The help of `--document`.
    static var documentHelp: ArgumentHelp { get }
    /// An example that the error for a `--document` that is not a UUID gives after "must be a UUID" (or "").
    static var documentExample: String { get }
}

/// `--store`, `--device` and `--document` of the hidden test drivers `log append` and `log sync`: the store file
/// they write (created if absent), the device they write it as, and the document their edits go to.
struct LogDriverOptions<Help: LogDriverHelp>: ParsableArguments {
    @Option(name: .long, help: "The store file (created if absent).")
    var store: String

    @Option(name: .long, help: Help.deviceHelp)
    var device = "cli"

    @Option(name: .long, help: Help.documentHelp)
    var document = "00000000-0000-4000-8000-000000000001"

    func validate() throws {
        guard UUIDBytes(document) != nil else {
            throw ValidationError("--document must be a UUID\(Help.documentExample), not '\(document)'")
        }
    }

    /// The document `--document` names (checked by ``validate()``).
    var documentID: DocumentID { DocumentID(UUIDBytes(document)!) }

    /// Opens the store file as the device `--device` names.
    func openStore(durability: Durability = .normal) throws -> ChangeLogStore {
        try folio.openStore(at: store, deviceNamed: device, durability: durability)
    }
}
