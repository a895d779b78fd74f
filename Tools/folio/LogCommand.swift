import ArgumentParser
import FolioCore
import FolioStore
import Foundation

/// `folio log …`: work with change-log stores directly.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Work with change-log stores: exercise, append, sync, show and verify.",
        subcommands: [LogExerciseCommand.self, LogAppendCommand.self, LogSyncCommand.self, LogShowCommand.self, LogVerifyCommand.self]
    )
}

/// Opens a store for a command, mapping "not a store" and "newer format" to invalid input.
func openStore(at path: String, device: Device, clock: any WallClock = SystemClock(), durability: Durability = .normal) throws -> ChangeLogStore {
    do {
        return try ChangeLogStore(at: URL(fileURLWithPath: path), device: device, clock: clock, durability: durability)
    } catch where error.code == .notAStore || error.code == .newerFormat {
        throw CommandFailure.invalidInput(error.message)
    } catch {
        throw CommandFailure.checkFailed("cannot open \(path): \(error)")
    }
}

/// A deterministic device identity for a command-line name: the same name gives the same device on every run.
func deviceID(named name: String) -> DeviceID {
    var seed: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in name.utf8 { seed = (seed ^ UInt64(byte)) &* 0x100_0000_01b3 }  // FNV-1a
    return DeviceID(using: SeededIdentifierSource(seed: seed))
}

/// Flushing standard output line by line matters to callers that read it while the process may be killed.
func printFlushed(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
