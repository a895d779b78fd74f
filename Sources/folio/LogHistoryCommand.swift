import ArgumentParser
import FolioConflicts
import FolioCore
import FolioDocuments
import FolioFiles
import FolioModels
import FolioStore
import Foundation

/// `folio log history STORE --document NAME`: a document's versions (``Document/history()``), numbered oldest
/// first, as the store's own device recorded and people named them.
struct LogHistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List a document's versions: saved, closed, received, restored and named.",
        discussion: """
            One line per version, oldest first: its number (for `folio log show --at`), date, occasion, name, \
            the changes since the version before it and their devices, and its head. The store is only read: a \
            temporary copy of it is opened as the device that made it.
            """)

    @OptionGroup var file: StoreCopyArgument

    @Option(help: "The document's display name.")
    var document: String

    func run() async throws {
        try await DocumentHistoryAccess.withDocument(named: document, inStoreAt: file.store) { document, names in
            let history = try await document.history()
            if history.isEmpty { printEscaped("no versions recorded or named") }
            for (index, version) in history.enumerated() {
                let name = version.name.map { " \($0.debugDescription)" } ?? ""
                let devices = version.summary.devices.map { names[$0] ?? $0.description }.joined(separator: ", ")
                printEscaped(
                    "\(index + 1)  \(version.date)  \(version.occasion.rawValue)\(name)  \(version.summary.changes) change\(version.summary.changes == 1 ? "" : "s") by \(devices.isEmpty ? "nobody" : devices)  \(version.id.shortHex)"
                )
            }
        }
    }
}

/// Opens one document of a store for the history commands: the store copied into a temporary library directory,
/// opened as the device that made it with manual autosave and the `askUser` policy (nothing is settled or written
/// back), the document found by name (deleted ones too) and opened as its built-in model.
enum DocumentHistoryAccess {
    static func withDocument(
        named name: String, inStoreAt path: String,
        _ body: (any HistoryReading, [DeviceID: String]) async throws -> Void
    ) async throws {
        let fileSystem = PosixFileSystem()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "folio-history-\(UUID().uuidString)", isDirectory: true)
        defer { try? fileSystem.remove(at: root) }
        let storeURL = root.appendingPathComponent(".folio/store.sqlite")
        let library: DocumentLibrary
        do {
            try fileSystem.createDirectories(at: storeURL.deletingLastPathComponent())
            try ChangeLogStore.snapshot(ofStoreAt: URL(fileURLWithPath: path), to: storeURL, fileSystem: fileSystem)
            let owner =
                try DeviceRegistry.localIdentity(ofStoreAt: storeURL)
                ?? (deviceKey(named: "folio-cli"), "folio-cli", "")
            library = try DocumentLibrary(
                at: root, key: owner.key, deviceName: owner.name, person: owner.person, types: .builtIn,
                fileSystem: fileSystem,
                autosave: .manual, conflictPolicy: ConflictPolicy(default: .askUser), backgroundWork: false)
        } catch let error as StoreError where error.code == .notAStore || error.code == .newerFormat {
            throw CommandFailure.invalidInput(error.message.replacingOccurrences(of: storeURL.path, with: path))
        } catch {
            throw CommandFailure.checkFailed("cannot read \(path): \(error)")
        }
        defer { try? library.store.close() }
        let names = Dictionary(
            try library.store.devices.all().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let infos = try await library.documents(includingDeleted: true)
        guard let info = infos.first(where: { $0.displayName == name }) else {
            throw CommandFailure.invalidInput("\(path) has no document named \(name.debugDescription)")
        }
        let document: any HistoryReading
        switch info.typeIdentifier {
        case TextDocument.documentType.identifier: document = try await library.open(info.id, as: TextDocument.self)
        case PagesDocument.documentType.identifier: document = try await library.open(info.id, as: PagesDocument.self)
        case RecordsDocument.documentType.identifier:
            document = try await library.open(info.id, as: RecordsDocument.self)
        default:
            throw CommandFailure.invalidInput(
                "\(name.debugDescription) is a \(info.typeIdentifier) document, which this tool cannot open")
        }
        try await body(document, names)
    }

    /// The version `reference` names in `history`: its number in `folio log history`, the start of its head's hash
    /// (6 hex digits or more), or a time (ISO 8601, such as `2026-01-01T10:00:00Z`: the newest version then).
    static func version(_ reference: String, in history: [HistoryVersion]) throws -> HistoryVersion {
        // A number names a version when there is one of that number; digits that name none are read as a hash's
        // start when they could be one.
        if reference.allSatisfy(\.isASCIIDigitCharacter), let number = Int(reference), reference.count <= 9,
            (1...max(history.count, 1)).contains(number) || reference.count < 6
        {
            guard number >= 1, number <= history.count else {
                throw CommandFailure.invalidInput(
                    "there is no version \(number): the document has \(history.count) (see folio log history)")
            }
            return history[number - 1]
        }
        if let date = ISO8601DateFormatter.parsing(reference) {
            let time = Timestamp(millisecondsSince1970: Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
            guard let version = history.last(where: { $0.date <= time }) else {
                throw CommandFailure.invalidInput("the document has no version at or before \(reference)")
            }
            return version
        }
        let prefix = reference.lowercased()
        guard prefix.count >= 6, prefix.allSatisfy(\.isHexDigit) else {
            throw CommandFailure.invalidInput(
                "\(reference.debugDescription) is not a version number, a hash of 6 or more hex digits, or an ISO 8601 time"
            )
        }
        let matches = history.filter { $0.id.hex.hasPrefix(prefix) }
        guard matches.count == 1 else {
            throw CommandFailure.invalidInput(
                matches.isEmpty
                    ? "no version's hash starts with \(prefix)"
                    : "\(matches.count) versions' hashes start with \(prefix)")
        }
        return matches[0]
    }
}

extension Character {
    /// `0` to `9`.
    var isASCIIDigitCharacter: Bool { ("0"..."9").contains(self) }
}

extension ISO8601DateFormatter {
    /// `text` as an ISO 8601 time, with or without fractional seconds.
    static func parsing(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}

/// What the history commands read of an open document, whatever its model.
protocol HistoryReading: Sendable {
    func history() async throws -> [HistoryVersion]
    /// The contents at `version`, as the lines to print: a flat file's text, a package's members.
    func printableContents(at version: HistoryVersion) async throws -> [String]
}

extension Document: HistoryReading {
    func printableContents(at version: HistoryVersion) async throws -> [String] {
        switch try contents(at: version).contents() {
        case .data(let data):
            return [String(decoding: data, as: UTF8.self)]
        case .package(let package):
            return package.manifest.map { member in
                "\(member.path)  \(member.size) bytes  sha256 \(member.hash.hex.prefix(12))"
            }
        }
    }
}
