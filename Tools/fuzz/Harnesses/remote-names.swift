// remote-names: document names from peers turned into file names by `fileURL(for:)` (its synchronous form).
// Document names, types and containers that arrive from a peer (a `create`, then maybe a rename and
// a move, as changes ingested into a library's store) and become file names through `fileURL(for:)`.
// Oracles: `fileURL(for:)` returns (the fuzzer's timeout catches a name loop that never ends), and its URL names a
// file directly in the container's directory, byte for byte, after `..` and `.` are resolved.
import FolioCore
import FolioStore
import Foundation

@testable import FolioDocuments

enum Harness {
    static let remote = FuzzIDs.device(21)
    nonisolated(unsafe) static var library: DocumentLibrary?
    nonisolated(unsafe) static var executions: UInt64 = 0

    /// A library reused for a few hundred executions (opening one costs far more than an execution), then replaced
    /// so that its documents and name claims stay few.
    static func currentLibrary() -> DocumentLibrary {
        executions += 1
        if let library, executions % 512 != 0 { return library }
        library = nil
        do {
            let made = try DocumentLibrary(
                at: ScratchDirectory.fresh("library"), key: FuzzIDs.key(20), deviceName: "local",
                clock: ManualClock(start: FuzzIDs.epoch), identifiers: SeededIdentifierSource(seed: 20),
                durability: .off,
                access: .exclusive)
            library = made
            return made
        } catch {
            fatalError("cannot open a library: \(error)")
        }
    }

    static func run(_ input: UnsafeRawBufferPointer) {
        var fuzz = FuzzInput(input)
        let library = currentLibrary()
        let document = FuzzIDs.document(1_000 + executions)
        var changes: [Change] = []
        var lamport: UInt64 = 0
        func add(_ kind: ChangeKind) {
            lamport += 1
            changes.append(
                Change(
                    document: document, id: ChangeID(device: remote, seq: lamport),
                    parents: changes.last.map { [$0.hash] } ?? [],
                    vector: VersionVector([(remote, lamport)]), lamport: lamport,
                    wallTime: FuzzIDs.epoch.advanced(by: Int64(lamport)), kind: kind))
        }
        let type = fuzz.pick(["com.folio.text", "com.folio.records", "com.folio.pages", "x", ""])
        let customType = fuzz.bool()
        add(
            .lifecycle(
                .create(
                    name: fuzz.string(upTo: 300), type: customType ? fuzz.string(upTo: 40) : type,
                    container: fuzz.bool() ? .shared : .local)))
        if fuzz.bool() { add(.lifecycle(.rename(to: fuzz.string(upTo: 300)))) }
        if fuzz.bool() { add(.lifecycle(.move(to: fuzz.bool() ? .shared : .local))) }
        do {
            try library.store.ingest(changes, heads: [SignedHead(signing: changes.last!, with: FuzzIDs.key(21))])
        } catch {
            return
        }
        let info: DocumentInfo
        do {
            guard let found = try library.catalogInfo(of: document) else { return }
            info = found
        } catch {
            return
        }
        let url: URL
        do {
            url = try library.fileLocation(for: info)
        } catch {
            return
        }
        let container = library.directory(of: info.container).standardizedFileURL.path
        let path = url.standardizedFileURL.path
        let prefix = Array((container + "/").utf8)
        let bytes = Array(path.utf8)
        require(
            bytes.starts(with: prefix),
            "the file of a document named \(info.displayName.debugDescription) is \(path.debugDescription), outside \(container)"
        )
        let name = bytes.dropFirst(prefix.count)
        require(
            !name.isEmpty && !name.contains(UInt8(ascii: "/")),
            "the file of a document named \(info.displayName.debugDescription) is \(path.debugDescription), not directly in \(container)"
        )
    }

    static func seeds() -> [[UInt8]] {
        func seed(type: UInt8, name: String, container: UInt8, rename: String?) -> [UInt8] {
            // Lengths are two bytes, as `FuzzInput.string(upTo: 300)` reads them.
            func text(_ string: String) -> [UInt8] {
                [UInt8(string.utf8.count >> 8), UInt8(string.utf8.count & 0xFF)] + Array(string.utf8)
            }
            var bytes: [UInt8] = [type, 0] + text(name) + [container]
            if let rename {
                bytes += [1] + text(rename)
            } else {
                bytes += [0]
            }
            return bytes + [0]
        }
        return [
            seed(type: 0, name: "Notes", container: 0, rename: nil),
            seed(type: 1, name: "Budget", container: 1, rename: "Budget 2"),
            seed(type: 2, name: "Pages", container: 0, rename: "Renamed é"),
            seed(type: 0, name: "a.b", container: 1, rename: nil),
        ]
    }
}
