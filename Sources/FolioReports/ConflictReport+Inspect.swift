import FolioConflicts
import FolioCore
import FolioDocuments
import FolioFiles
import FolioModels
import FolioStore
import Foundation

extension ConflictReport {
    /// The conflict-inspection report of a library directory (`folio inspect DIR`): every document, deleted ones
    /// included, as the library's own device holds it, with its conflicts, losses and causal graph; the outcome
    /// says whether the store verifies as sound.
    ///
    /// The library is not touched: a copy of it is inspected (its store copied as of one commit by
    /// ``ChangeLogStore/snapshot(ofStoreAt:to:attempts:fileSystem:)``, its `Documents/` and `Shared/` as they are), in
    /// a temporary directory removed afterwards. The copy is opened as the device its store was created for
    /// (``DeviceRegistry/firstDevice(ofStoreAt:)``), with the `askUser` policy and manual autosave, so the report
    /// shows what the app would find at its next opening: an interrupted save cleaned up, a file changed on disk by
    /// another program recorded, open conflicts left open.
    ///
    /// - Parameters:
    ///   - url: the library directory; the report's `source` is its path as given.
    ///   - title: the report's title; by default `Library NAME`.
    ///   - fileSystem: every file call of the copy and of the library opened on it.
    /// - Throws: ``ReportError`` `.notALibrary` when `url` holds no Folio store, `.unreadable` when the library
    ///   cannot be opened or read.
    public static func inspect(
        libraryAt url: URL, title: String? = nil, fileSystem: any FileSystem = PosixFileSystem()
    ) async throws -> ConflictReport {
        let storeURL = url.appendingPathComponent(".folio/store.sqlite")
        guard (try? fileSystem.itemKind(at: storeURL)) ?? .absent != .absent else {
            throw ReportError(.notALibrary, "\(url.path) is not a Folio library: it has no .folio/store.sqlite")
        }
        let copy = try LibraryCopy(of: url, fileSystem: fileSystem)
        defer { copy.remove() }
        let owner: Device?
        let ownerKey: DeviceKey?
        do {
            owner = try DeviceRegistry.firstDevice(ofStoreAt: copy.store)
            ownerKey = try DeviceRegistry.localIdentity(ofStoreAt: copy.store)?.key
        } catch {
            // The error names the copy's store; the user knows the library's.
            let message = error.message.replacingOccurrences(of: copy.store.path, with: storeURL.path)
            throw ReportError(
                .notALibrary, "\(url.path) is not a Folio library",
                cause: StoreError(error.code, message, cause: error.cause))
        }
        guard let owner else {
            throw ReportError(.notALibrary, "\(url.path) is not a Folio library: its store records no device")
        }
        let library: DocumentLibrary
        let captures: [DocumentCapture]
        let verification: VerificationReport
        do {
            library = try DocumentLibrary(
                // As its owner, with the key its store keeps (a store from before keys: a new one, for the copy).
                at: copy.root, key: ownerKey ?? DeviceKey(), deviceName: owner.name,
                types: .builtIn, fileSystem: fileSystem,
                autosave: .manual, conflictPolicy: ConflictPolicy(default: .askUser), backgroundWork: false)
            captures = try await DocumentCapture.captures(of: library)
        } catch {
            throw ReportError(.unreadable, "cannot read the library at \(url.path)", cause: error)
        }
        do {
            verification = try library.store.verify()
            try library.store.close()
        } catch {
            throw ReportError(.unreadable, "cannot verify the store of the library at \(url.path)", cause: error)
        }
        let assembler = ReportAssembler(captures: captures, devices: [owner])
        return ConflictReport(
            title: title ?? "Library \(url.lastPathComponent)", kind: .library, source: url.relativePath,
            outcome: Outcome(failures: verification.problems.map { Failure(message: $0.description) }),
            devices: assembler.devices, documents: assembler.documents())
    }
}
