import FolioFiles
import Foundation

extension DocumentLibrary {
    /// Removes the library at `root` from this device, all of it: its shared documents' files (`Shared/`), its local
    /// documents (`Documents/`, which no other device holds), then its store (`.folio/`: every document's history,
    /// the changes not yet sent, and this device's key), then `root` itself when nothing else is left in it. Nothing
    /// is sent anywhere: what the server and other devices hold of the shared documents stays with them, and what only
    /// this device held (local documents, unsent changes) is gone.
    ///
    /// This is what an app does when the server no longer grants the person the library (`LibraryEvent.accessRevoked`)
    /// and the app chooses not to keep what they could see. Call it once every `DocumentLibrary` of `root` is let go
    /// of (its sync stopped, its documents closed). Files the app put in `root` beside the library's are kept. A
    /// removal cut short (a crash) leaves a library that opens with less or nothing in it; calling this again finishes
    /// it.
    ///
    /// - Parameters:
    ///   - root: the library directory, as given to ``init(at:key:deviceName:person:types:clock:identifiers:fileSystem:durability:access:autosave:conflictPolicy:backgroundWork:executor:blobThreshold:)``.
    ///   - fileSystem: the file I/O.
    /// - Throws: ``DocumentError`` `.save` when a part cannot be removed (what was removed before it stays removed).
    public static func removeLocalCopies(
        at root: URL, fileSystem: any FileSystem = PosixFileSystem()
    ) throws(DocumentError) {
        let parts = [
            directory(of: .local, in: root), directory(of: .shared, in: root),
            root.appendingPathComponent(".folio", isDirectory: true),
        ]
        for part in parts {
            do { try fileSystem.remove(at: part) } catch let error as FileSystemError where error.code == .notFound {
            } catch {
                throw DocumentError(.save, "cannot remove \(part.path)", cause: error)
            }
        }
        do {
            if try fileSystem.contentsOfDirectory(at: root).isEmpty { try fileSystem.remove(at: root) }
        } catch let error as FileSystemError where error.code == .notFound {
        } catch {
            throw DocumentError(.save, "cannot remove \(root.path)", cause: error)
        }
    }
}
