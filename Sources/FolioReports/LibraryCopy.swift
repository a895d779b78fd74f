import FolioStore
import Foundation

/// A copy of a library directory, in a new temporary directory, for inspecting a library without touching it: its
/// store copied as of one commit (``ChangeLogStore/snapshot(ofStoreAt:to:attempts:)``), its `Documents/` and
/// `Shared/` as they are. ``remove()`` deletes it.
struct LibraryCopy {
    /// The copy's library directory.
    let root: URL
    /// The temporary directory that holds it.
    private let container: URL

    /// The copy's store file.
    var store: URL { root.appendingPathComponent(".folio/store.sqlite") }

    /// Copies the library at `library`.
    ///
    /// - Throws: ``ReportError`` `notALibrary` when its store is not one, `unreadable` when it cannot be copied.
    init(of library: URL) throws(ReportError) {
        let fileManager = FileManager.default
        container = fileManager.temporaryDirectory.appendingPathComponent("folio-inspect-\(UUID().uuidString)", isDirectory: true)
        root = container.appendingPathComponent(library.lastPathComponent, isDirectory: true)
        do {
            try fileManager.createDirectory(at: root.appendingPathComponent(".folio"), withIntermediateDirectories: true)
        } catch {
            throw ReportError(.unreadable, "cannot make a temporary copy of the library at \(library.path)", cause: error)
        }
        do {
            try ChangeLogStore.snapshot(ofStoreAt: library.appendingPathComponent(".folio/store.sqlite"), to: store)
        } catch {
            remove()
            let code: ReportErrorCode = error.code == .notAStore ? .notALibrary : .unreadable
            throw ReportError(code, "\(library.path) is \(code == .notALibrary ? "not a Folio library" : "unreadable")", cause: error)
        }
        for name in ["Documents", "Shared"] where fileManager.fileExists(atPath: library.appendingPathComponent(name).path) {
            do {
                try fileManager.copyItem(at: library.appendingPathComponent(name), to: root.appendingPathComponent(name))
            } catch {
                remove()
                throw ReportError(.unreadable, "cannot copy \(library.appendingPathComponent(name).path) to inspect it", cause: error)
            }
        }
    }

    /// Deletes the copy.
    func remove() {
        try? FileManager.default.removeItem(at: container)
    }
}
