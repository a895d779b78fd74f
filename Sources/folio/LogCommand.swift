import ArgumentParser
import FolioCore
import FolioFiles
import FolioStore
import Foundation

/// `folio log …`: work with change-log stores directly.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Look into change-log stores: show, verify and list a document's history.",
        subcommands: [
            LogExerciseCommand.self, LogAppendCommand.self, LogSyncCommand.self, LogShowCommand.self,
            LogHistoryCommand.self, LogVerifyCommand.self,
        ]
    )
}

extension CommandConfiguration {
    /// The configuration of a driver for Folio's own tests (kills, two processes on one folder): a command hidden
    /// from users.
    static func testDriver(commandName: String, abstract: String) -> CommandConfiguration {
        CommandConfiguration(commandName: commandName, abstract: abstract, shouldDisplay: false)
    }
}

/// Opens a store for a command, through `fileSystem` (its header and first image), mapping "not a store" and
/// "newer format" to invalid input.
func openStore(
    at path: String, deviceNamed name: String, clock: any WallClock = SystemClock(), durability: Durability = .normal,
    fileSystem: any FileSystem = PosixFileSystem()
) throws -> ChangeLogStore {
    do {
        return try ChangeLogStore(
            at: URL(fileURLWithPath: path), key: deviceKey(named: name), deviceName: name, clock: clock,
            durability: durability,
            fileSystem: fileSystem)
    } catch let error as StoreError where error.code == .notAStore || error.code == .newerFormat {
        throw CommandFailure.invalidInput(error.message)
    } catch {
        throw CommandFailure.checkFailed("cannot open \(path): \(error)")
    }
}

/// A store read without changing it: a copy of its files (``ChangeLogStore/snapshot(ofStoreAt:to:attempts:)``),
/// opened as the device that made it. Opening the store itself as a tool's own device would register that device
/// in it (and every peer it syncs with would learn of it) and could checkpoint or recover it.
struct StoreCopy {
    let store: ChangeLogStore
    private let directory: URL
    private let fileSystem: any FileSystem

    /// Copies the store at `path` into a new temporary directory and opens the copy; every file call of the copy
    /// goes through `fileSystem`.
    init(of path: String, fileSystem: any FileSystem = PosixFileSystem()) throws {
        self.fileSystem = fileSystem
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "folio-log-\(UUID().uuidString)", isDirectory: true)
        let copy = directory.appendingPathComponent("store.sqlite")
        do {
            try fileSystem.createDirectories(at: directory)
        } catch {
            throw CommandFailure.checkFailed("cannot make a temporary copy of \(path): \(CommandFiles.reason(error))")
        }
        do {
            try ChangeLogStore.snapshot(ofStoreAt: URL(fileURLWithPath: path), to: copy, fileSystem: fileSystem)
            let owner =
                try DeviceRegistry.localIdentity(ofStoreAt: copy) ?? (deviceKey(named: "folio-cli"), "folio-cli", "")
            store = try ChangeLogStore(
                at: copy, key: owner.key, deviceName: owner.name, person: owner.person, durability: .off,
                fileSystem: fileSystem)
        } catch {
            try? fileSystem.remove(at: directory)
            let storeError = error as? StoreError
            let message = (storeError?.message ?? "\(error)").replacingOccurrences(of: copy.path, with: path)
            if storeError?.code == .notAStore || storeError?.code == .newerFormat {
                throw CommandFailure.invalidInput(message)
            }
            throw CommandFailure.checkFailed("cannot read \(path): \(message)")
        }
    }

    /// Closes the copy and removes it.
    func remove() {
        try? store.close()
        try? fileSystem.remove(at: directory)
    }
}

/// `iPad 3, Mac 1`: a vector with device names where the store knows them.
func describe(_ vector: VersionVector, names: [DeviceID: String]) -> String {
    guard !vector.isEmpty else { return "empty" }
    return vector.entries.map {
        "\(names[$0.device].flatMap { $0.isEmpty ? nil : $0 } ?? $0.device.description) \($0.seq)"
    }
    .joined(separator: ", ")
}

/// A deterministic device key for a command-line name: the same name gives the same device on every run. Anyone
/// who knows the name can make the key, so these devices are for trying the log out, not for data to protect.
func deviceKey(named name: String) -> DeviceKey {
    var seed: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in name.utf8 { seed = (seed ^ UInt64(byte)) &* 0x100_0000_01b3 }  // FNV-1a
    return DeviceKey(using: SeededIdentifierSource(seed: seed))
}

/// Flushing standard output line by line matters to callers that read it while the process may be killed.
func printFlushed(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
