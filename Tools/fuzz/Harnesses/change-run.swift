// change-run: a run of changes in the compact form (message format 3's `run`) decoded from untrusted bytes.
// `ChangeRunMessage`'s checks of what a run declares, then its decoding against a log that holds the first changes
// of the sample history (`ChangeRunCodec.decode`), then the changes handed to a responding `SyncDriver` as a run.
// Oracles: nothing traps; a run that decodes holds the changes it declares, each re-encodes to canonical bytes whose
// hash is the change's, their encodings take no more than the bound checked before decoding, and they encode as a run
// again that decodes to the same changes; the driver's store stays sound and takes an append.
import CZlib
import FolioModels
import FolioStore
import Foundation

@testable import FolioCore
@testable import FolioSync

enum Harness {
    static let history = SampleChanges.history()
    static let document = SampleChanges.document
    static let local = FuzzIDs.key(9)
    /// The log a run is decoded against: the first ten changes of the sample history.
    static let held = Array(history.prefix(10))
    static let byID = Dictionary(uniqueKeysWithValues: held.map { ($0.id, $0) })
    static let byHash = Dictionary(uniqueKeysWithValues: held.map { ($0.hash, ChangeStamp($0)) })
    static let logDevices = Set(held.flatMap(\.vector.devices))

    static let template: ChangeLogStore = {
        do {
            let store = try ChangeLogStore(
                inMemoryNamed: "template", key: local, deviceName: "responder", clock: ManualClock(start: FuzzIDs.epoch)
            )
            try store.ingest(trusting: held)
            return store
        } catch {
            fatalError("cannot make the template store: \(error)")
        }
    }()

    static func run(_ input: UnsafeRawBufferPointer) {
        let bytes = Array(input)
        var writer = BinaryWriter(capacity: bytes.count + 24)
        writer.write(byte: SyncMessage.runFormatVersion)
        writer.write(byte: 4)
        writer.write(fixed: document.uuid.high)
        writer.write(fixed: document.uuid.low)
        writer.write(lengthPrefixed: bytes)
        writer.write(varint: 0)
        guard case .run(let run)? = try? SyncMessage(decoding: writer.bytes) else { return }
        let context = ChangeRunMessage.Context(logDevices: logDevices, waiting: [], earlier: [:])
        let decoded: [EncodedChange]
        do {
            decoded = try run.decodedChanges(in: context) { byID[$0] }
        } catch {
            return
        }
        require(decoded.count == run.count, "a run decodes to another number of changes than it declares")
        var encodedBytes = 0
        for change in decoded {
            let canonical = change.change.encoded()
            require(canonical == change.bytes, "a decoded change's bytes are not its canonical encoding")
            require(
                change.change.hash == ChangeHash(hashing: document.uuid.bytes + canonical),
                "a decoded change's hash is not that of its canonical encoding")
            encodedBytes += canonical.count
        }
        require(
            encodedBytes <= run.decodedBound(knownDevices: context.knownDevices),
            "decoded changes take more bytes than the bound checked before decoding")
        let changes = decoded.map(\.change)
        let again: [Change]
        do {
            let reencoded = try ChangeRunCodec.encode(changes, of: document) { byHash[$0] }
            again = try ChangeRunCodec.decode(reencoded, document: document) { byID[$0].map(ChangeStamp.init) }
        } catch {
            oracleFailed("decoded changes do not encode and decode again as a run: \(error)")
        }
        require(again.map(\.hash) == changes.map(\.hash), "a run re-encoded decodes to other changes")

        let store: ChangeLogStore
        do {
            store = try template.copyInMemory(named: "responder")
        } catch {
            fatalError("cannot copy the template store: \(error)")
        }
        do {
            var driver = try SyncDriver(store: store, role: .responder, id: 42)
            _ = try driver.receive(writer.bytes)
        } catch {
            // Refusing the changes is fine; what the store holds afterwards is checked below.
        }
        StoreChecks.requireSound(store, "after a run")
        StoreChecks.requireAppendWorks(store, "after a run")
    }

    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        let outside: (ChangeHash) -> ChangeStamp? = { byHash[$0] }
        // The sample history after the log's ten changes, whole and in pieces.
        let rest = Array(history.dropFirst(10))
        for piece in [rest, Array(rest.prefix(3)), Array(rest.suffix(2))] where !piece.isEmpty {
            if let run = try? ChangeRunCodec.encode(piece, of: document, outside: outside) { seeds.append(run) }
        }
        if let whole = try? ChangeRunCodec.encode(history, of: document, outside: { _ in nil }) { seeds.append(whole) }
        // Real typing: the first transactions of the friendsforever trace, as runs of up to 300 changes.
        for run in traceRuns() { seeds.append(run) }
        // Changes that list blob references (each in the form `other`): after the whole sample history, and on the
        // log's last change alone.
        for piece in [rest + SampleBlobs.changes(after: history), SampleBlobs.changes(after: held)] {
            if let run = try? ChangeRunCodec.encode(piece, of: document, outside: outside) { seeds.append(run) }
        }
        return seeds
    }

    /// Runs of the first 900 transactions of Benchmarks/traces/friendsforever.json.gz, recorded in a store as two
    /// devices typing (each transaction an edit, a transaction on several parents made on a merge resolution).
    static func traceRuns() -> [[UInt8]] {
        let url = URL(fileURLWithPath: "Benchmarks/traces/friendsforever.json.gz")
        guard let compressed = try? Data(contentsOf: url), let json = gunzip(compressed),
            let root = try? JSONSerialization.jsonObject(with: json) as? [String: Any],
            let txns = root["txns"] as? [[String: Any]]
        else {
            FileHandle.standardError.write(Data("change-run: cannot read \(url.path); no trace seeds\n".utf8))
            return []
        }
        do {
            let document = FuzzIDs.document(38)
            let store = try ChangeLogStore(
                inMemoryNamed: "trace", key: local, deviceName: "trace", clock: ManualClock(start: FuzzIDs.epoch))
            let root = try store.append(
                .lifecycle(.create(name: "trace", type: "com.folio.text", container: .shared)), to: document)
            let authors = [FuzzIDs.key(1), FuzzIDs.key(2)].map { $0.device(named: "") }
            var made: [ChangeHash] = []
            for txn in txns.prefix(900) {
                guard let agent = txn["agent"] as? Int, agent < authors.count, let parents = txn["parents"] as? [Int],
                    let patches = txn["patches"] as? [[Any]]
                else { return [] }
                var operations: [TextDocument.Operation] = []
                for patch in patches {
                    guard patch.count == 3, let position = patch[0] as? Int, let deleted = patch[1] as? Int,
                        let inserted = patch[2] as? String
                    else { return [] }
                    if deleted > 0 { operations.append(.delete(at: position, count: deleted)) }
                    if !inserted.isEmpty { operations.append(.insert(at: position, text: inserted)) }
                }
                let on = parents.isEmpty ? [root.hash] : parents.map { made[$0] }
                var kinds: [ChangeKind] = []
                if on.count > 1 { kinds.append(.resolution(Resolution(strategy: .merge, chosen: on, discarded: []))) }
                kinds.append(.edit(Edit(operations: TextDocument.Operation.encodeGroup(operations))))
                made.append(try store.append(kinds, to: document, on: .heads(on), author: authors[agent]).last!.hash)
            }
            let changes = try store.changes(of: document)
            var stamps: [ChangeHash: ChangeStamp] = [:]
            var runs: [[UInt8]] = []
            for start in stride(from: 0, to: changes.count, by: 300) {
                let piece = Array(changes[start..<min(start + 300, changes.count)])
                runs.append(try ChangeRunCodec.encode(piece, of: document) { stamps[$0] })
                for change in piece { stamps[change.hash] = ChangeStamp(change) }
            }
            return runs
        } catch {
            FileHandle.standardError.write(Data("change-run: cannot record the trace: \(error)\n".utf8))
            return []
        }
    }

    /// The bytes of a gzip stream, `nil` when it is not one.
    static func gunzip(_ data: Data) -> Data? {
        var stream = z_stream()
        guard folio_inflate_init_gzip(&stream) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var input = [UInt8](data)
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var status = Z_OK
        input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while status == Z_OK {
                buffer.withUnsafeMutableBufferPointer { target in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    output.append(target.baseAddress!, count: target.count - Int(stream.avail_out))
                }
            }
        }
        return status == Z_STREAM_END ? output : nil
    }
}
