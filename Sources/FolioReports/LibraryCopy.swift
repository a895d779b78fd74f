import FolioFiles
import FolioStore
import Foundation

/// A copy of a library directory, in a new temporary directory, for inspecting a library without touching it: its
/// store copied as of one commit (``ChangeLogStore/snapshot(ofStoreAt:to:attempts:fileSystem:)``), its `Documents/`
/// and `Shared/` as they are (their files and directories; a symbolic link or special file in them is neither
/// followed nor copied). Every file call goes through the injected file system. ``remove()`` deletes it.
struct LibraryCopy {
    /// The copy's library directory.
    let root: URL
    /// The temporary directory that holds it.
    private let container: URL
    /// The file system the copy is made on.
    private let fileSystem: any FileSystem

    /// The copy's store file.
    var store: URL { root.appendingPathComponent(".folio/store.sqlite") }

    /// Copies the library at `library`.
    ///
    /// - Throws: ``ReportError`` `notALibrary` when its store is not one, `unreadable` when it cannot be copied; the
    ///   copy made so far is removed.
    init(of library: URL, fileSystem: any FileSystem) throws(ReportError) {
        self.fileSystem = fileSystem
        container = FileManager.default.temporaryDirectory.appendingPathComponent(
            "folio-inspect-\(UUID().uuidString)", isDirectory: true)
        root = container.appendingPathComponent(library.lastPathComponent, isDirectory: true)
        do {
            try fileSystem.createDirectories(at: root.appendingPathComponent(".folio", isDirectory: true))
        } catch {
            remove()
            throw ReportError(
                .unreadable, "cannot make a temporary copy of the library at \(library.path)", cause: error)
        }
        do {
            try ChangeLogStore.snapshot(
                ofStoreAt: library.appendingPathComponent(".folio/store.sqlite"), to: store, fileSystem: fileSystem)
        } catch {
            remove()
            let code: ReportErrorCode = (error as? StoreError)?.code == .notAStore ? .notALibrary : .unreadable
            throw ReportError(
                code, "\(library.path) is \(code == .notALibrary ? "not a Folio library" : "unreadable")", cause: error)
        }
        for name in ["Documents", "Shared"] {
            let source = library.appendingPathComponent(name, isDirectory: true)
            do {
                guard try fileSystem.itemKind(at: source) == .directory else { continue }
                try copyTree(at: source, to: root.appendingPathComponent(name, isDirectory: true))
            } catch {
                remove()
                throw ReportError(.unreadable, "cannot copy \(source.path) to inspect it", cause: error)
            }
        }
    }

    /// Copies the directory at `source` to the new directory `destination`: files and directories, nothing else.
    private func copyTree(at source: URL, to destination: URL) throws {
        try fileSystem.createDirectory(at: destination)
        for name in try fileSystem.contentsOfDirectory(at: source) {
            let from = source.appendingPathComponent(name, isDirectory: false)
            let to = destination.appendingPathComponent(name, isDirectory: false)
            switch try fileSystem.itemKind(at: from) {
            case .directory: try copyTree(at: from, to: to)
            case .file: try fileSystem.copyFile(at: from, to: to)
            case .symbolicLink, .other, .absent: continue
            }
        }
    }

    /// Deletes the copy.
    func remove() {
        try? fileSystem.remove(at: container)
    }
}
