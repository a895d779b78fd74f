import CSQLitePowerLoss
import FolioCore
import FolioStore
import FolioTestDoubles
import Foundation

/// The SQLite files of a directory (a library's `.folio/`) on the power-loss VFS (see `Tests/CSQLitePowerLoss`):
/// contents are durable once their file is synced, creations and deletions once their directory is; at the cut the
/// I/O under way and everything after it fails, and ``materialize(into:)`` writes what survives.
final class PowerLossStore: PowerSupply, @unchecked Sendable {  // The session is the C model's, behind its own lock.
    /// What an I/O event was.
    enum Event: Character {
        case write = "w"
        case truncation = "t"
        case sync = "s"
        case deletion = "d"
    }

    private let session: OpaquePointer

    /// Models the SQLite files in `directory`, cutting the power at event `cutAt` (never when `nil`); `seed` chooses
    /// what volatile state survives.
    init(modeling directory: URL, cutAt: Int?, seed: UInt64) throws {
        try Self.installation.get()
        guard let session = folio_powerloss_begin(directory.path, cutAt ?? -1, seed) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: directory.path])
        }
        self.session = session
    }

    deinit {
        folio_powerloss_end(session)
    }

    /// The events so far, in order (the cut one included).
    var events: [Event] {
        (0..<folio_powerloss_event_count(session)).compactMap { index in
            Event(rawValue: Character(Unicode.Scalar(UInt8(bitPattern: folio_powerloss_event_kind(session, index)))))
        }
    }

    var isCut: Bool { folio_powerloss_is_cut(session) != 0 }

    func cut() { folio_powerloss_cut(session) }

    /// Writes the files that survive a power cut now into `destination` (an existing directory).
    func materialize(into destination: URL) throws {
        guard folio_powerloss_materialize(session, destination.path) >= 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: destination.path])
        }
    }

    /// The VFS becomes SQLite's default once, after the store's own process-wide settings (which must come first).
    private static let installation: Result<Void, any Error> = Result {
        _ = try ChangeLogStore(
            inMemoryNamed: "power-loss-installation", key: DeviceKey(using: SeededIdentifierSource(seed: 7)),
            deviceName: "Installer")
        let code = folio_powerloss_install()
        guard code == 0 else { throw CocoaError(.featureUnsupported, userInfo: ["sqlite": code]) }
    }
}
