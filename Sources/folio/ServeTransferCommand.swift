import ArgumentParser
import FolioCore
import FolioServer
import FolioStore
import Foundation
import Logging

/// `folio serve export`: a library's log, as the server keeps it, written to a store file.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a library's log to a new store file, which `folio log verify` checks and `import` takes.",
        discussion: """
            Every change, the signed heads that vouch for them, the blobs and the devices' names. From a data \
            directory, stop the server first (it holds each log exclusively); from PostgreSQL, servers may run.
            """)

    @OptionGroup var data: ServeDataOptions

    @Option(help: "The library to export.")
    var library: String

    @Option(
        name: .customLong("to"), help: ArgumentHelp("The store file to write (it must not exist).", valueName: "file"))
    var file: String

    func run() throws {
        try LogTransfer.checkName(library)
        let url = URL(fileURLWithPath: file)
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw CommandFailure.invalidInput("\(file) exists already: export writes a new file")
        }
        let transfer = try LogTransfer.Scratch()
        defer { transfer.remove() }
        let storage = try data.openStorage(scratch: transfer.url)
        let copied: LogTransfer.Copied
        do {
            guard try storage.hasLog(of: library) else {
                throw CommandFailure.invalidInput("there is no library \(library)")
            }
            let log = try storage.openLog(of: library, logger: Logger(label: "folio.export"))
            let store = try ChangeLogStore(at: url, key: DeviceKey(), deviceName: "export \(library)")
            defer { try? store.close() }
            copied = try LogTransfer.copy(from: log, into: store)
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw CommandFailure.checkFailed("cannot export library \(library): \(error)")
        }
        print("exported \(copied.description) of library \(library) to \(file)")
    }
}

/// `folio serve import`: a store file's changes taken into a library, checked as a device's are.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Take a store file's changes into a library (created if new), checked as any device's are.",
        discussion: """
            The file is one `export` wrote, or a device's store (its own changes are signed with its key). What \
            the library has already is left as it is. Into a data directory, stop the server first; into \
            PostgreSQL, running servers pass the changes on to their devices.
            """)

    @OptionGroup var data: ServeDataOptions

    @Option(help: "The library to import into.")
    var library: String

    @Option(name: .customLong("from"), help: ArgumentHelp("The store file to read.", valueName: "file"))
    var file: String

    func run() throws {
        try LogTransfer.checkName(library)
        let url = URL(fileURLWithPath: file)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CommandFailure.invalidInput("there is no file \(file)")
        }
        let transfer = try LogTransfer.Scratch()
        defer { transfer.remove() }
        let storage = try data.openStorage(scratch: transfer.url)
        let copied: LogTransfer.Copied
        do {
            guard let identity = try DeviceRegistry.localIdentity(ofStoreAt: url) else {
                throw CommandFailure.invalidInput("\(file) is not a store file")
            }
            let store = try ChangeLogStore(
                at: url, key: identity.key, deviceName: identity.name, person: identity.person)
            defer { try? store.close() }
            let log = try storage.openLog(of: library, logger: Logger(label: "folio.import"))
            copied = try LogTransfer.copy(from: store, into: log)
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure.checkFailed("cannot import \(file) into library \(library): \(error)")
        }
        print("imported \(copied.description) from \(file) into library \(library)")
    }
}
