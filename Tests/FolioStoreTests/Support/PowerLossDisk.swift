import CSQLitePowerLoss
import FolioCore
import FolioStore
import Foundation

/// A directory whose SQLite files live on a simulated disk that can lose power (the `folio-powerloss` VFS, see
/// `Tests/CSQLitePowerLoss`): writes and truncations are durable once their file is synced, creations and deletions
/// once their directory is, and at the cut the I/O under way and everything after it fails.
///
/// Not `Sendable`: one test drives one disk.
final class PowerLossDisk {
    /// What an I/O event was.
    enum Event: Character {
        case write = "w"
        case truncation = "t"
        case sync = "s"
        case deletion = "d"
    }

    private let session: OpaquePointer

    /// Starts modeling the SQLite files in `directory`; the power is cut at event `cutAt` (never when `nil`), and
    /// `seed` chooses what volatile state survives.
    init(modeling directory: URL, cutAt: Int?, seed: UInt64) throws {
        try Self.install()
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

    /// Whether the power was cut.
    var isCut: Bool { folio_powerloss_is_cut(session) != 0 }

    /// Writes the files that survive a power cut now into `destination` (an empty directory).
    func materialize(into destination: URL) throws {
        guard folio_powerloss_materialize(session, destination.path) >= 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: destination.path])
        }
    }

    /// Makes the VFS SQLite's default, once, after the store's own process-wide settings (which must come first).
    private static func install() throws {
        try installation.get()
    }

    private static let installation: Result<Void, any Error> = Result {
        _ = try ChangeLogStore(inMemoryNamed: "power-loss-installation", device: Device.named("Installer"))
        let code = folio_powerloss_install()
        guard code == 0 else { throw CocoaError(.featureUnsupported, userInfo: ["sqlite": code]) }
    }
}
