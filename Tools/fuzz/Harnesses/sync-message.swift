// sync-message: a sync protocol message (format 2, 3 or 4) decoded from untrusted bytes and handed to a responding peer.
// `SyncMessage(decoding:)` on untrusted bytes, then the message handed to a responding `SyncDriver`
// over a store that holds an honest history.
// Oracles: decoding never traps; a decoded message re-encodes to bytes that decode to an equal message and encode
// to themselves again; the driver never traps, and afterwards the store is sound and takes a local append.
import FolioStore
import Foundation

@testable import FolioCore
@testable import FolioSync

enum Harness {
    static let history = SampleChanges.history()
    static let local = FuzzIDs.key(9)

    /// The responder's store before each message: the first ten changes of the sample history.
    static let template: ChangeLogStore = {
        do {
            let store = try ChangeLogStore(
                inMemoryNamed: "template", key: local, deviceName: "responder", clock: ManualClock(start: FuzzIDs.epoch)
            )
            try store.ingest(trusting: Array(history.prefix(10)))
            return store
        } catch {
            fatalError("cannot make the template store: \(error)")
        }
    }()

    static func run(_ input: UnsafeRawBufferPointer) {
        let bytes = Array(input)
        guard let message = try? SyncMessage(decoding: bytes), let format = SyncMessage.format(of: bytes) else {
            return
        }
        // Written again in the format it came in (a run exists only in formats 3 and 4, persons only in 4).
        let encoded = message.encoded(format: format)
        let again: SyncMessage
        do {
            again = try SyncMessage(decoding: encoded)
        } catch {
            oracleFailed("a decoded message re-encodes to bytes that do not decode: \(error)")
        }
        require(again == message, "a decoded message re-encodes to another message")
        require(again.encoded(format: format) == encoded, "a message's encoding is not stable")

        let store: ChangeLogStore
        do {
            store = try template.copyInMemory(named: "responder")
        } catch {
            fatalError("cannot copy the template store: \(error)")
        }
        do {
            var driver = try SyncDriver(store: store, role: .responder, id: 42)
            _ = try driver.receive(bytes)
            _ = try driver.tick()
        } catch {
            // Refusing a message is fine; what the store holds afterwards is checked below.
        }
        StoreChecks.requireSound(store, "after a message")
        StoreChecks.requireAppendWorks(store, "after a message")
    }

    static func seeds() -> [[UInt8]] {
        let document = SampleChanges.document
        let vector = history.prefix(12).reduce(VersionVector()) { $0.merging($1.vector) }
        let hello = SyncHello(
            device: Device(id: SampleChanges.second, name: "peer"), session: 7, vectors: [document: vector],
            heads: [document: [history[11].hash]], devices: [Device(id: SampleChanges.first, name: "first")])
        let reply = SyncHello(device: Device(id: SampleChanges.first, name: ""), session: 8, replyTo: 42, vectors: [:])
        let messages: [SyncMessage] = [
            .hello(hello),
            .hello(reply),
            .request(document: document, since: history[3].vector),
            .request(document: FuzzIDs.document(3), since: VersionVector()),
            .changes(
                document: document, changes: history.suffix(from: 10).map(EncodedChange.init),
                heads: SampleChanges.heads(of: Array(history.suffix(from: 10)))),
            .changes(document: document, changes: [EncodedChange(history[12])], heads: []),
            .done(from: 7, to: 42),
        ]
        var seeds = messages.map { $0.encoded() }
        // Format 3: a hello, and the changes after the responder's ten as a run.
        seeds.append(SyncMessage.hello(hello).encoded(format: SyncMessage.runFormatVersion))
        let held = Dictionary(uniqueKeysWithValues: history.prefix(10).map { ($0.hash, ChangeStamp($0)) })
        if let run = try? ChangeRunMessage(
            encoding: Array(history.suffix(from: 10)), of: document,
            heads: SampleChanges.heads(of: Array(history.suffix(from: 10))), outside: { held[$0] })
        {
            seeds.append(SyncMessage.run(run).encoded(format: SyncMessage.runFormatVersion))
        }
        // Blobs: changes that refer to some, made on the responder's last change (it takes them and asks for the
        // blobs), as a list and as a run; and the asking and answering messages in both formats.
        let withBlobs = SampleBlobs.changes(after: Array(history.prefix(10)))
        let blobHeads = SampleChanges.heads(of: withBlobs)
        seeds.append(
            SyncMessage.changes(document: document, changes: withBlobs.map(EncodedChange.init), heads: blobHeads)
                .encoded())
        if let run = try? ChangeRunMessage(encoding: withBlobs, of: document, heads: blobHeads, outside: { held[$0] }) {
            seeds.append(SyncMessage.run(run).encoded(format: SyncMessage.runFormatVersion))
        }
        let references = SampleBlobs.references
        let blobs = SampleBlobs.blobs
        let blobMessages: [(SyncMessage, UInt8)] = [
            (.wantBlobs([references[0]]), SyncMessage.formatVersion),
            (.wantBlobs(references), SyncMessage.runFormatVersion),
            (.blobs([blobs[0]], lacking: []), SyncMessage.formatVersion),
            (.blobs([], lacking: Array(references.prefix(2))), SyncMessage.formatVersion),
            (.blobs([blobs[1], blobs[2]], lacking: [BlobReference(to: blobs[0])]), SyncMessage.runFormatVersion),
        ]
        seeds += blobMessages.map { $0.encoded(format: $1) }
        // Format 4: a hello whose devices carry their persons.
        let people = SyncHello(
            device: Device(id: SampleChanges.second, name: "peer", person: "Anna"), session: 9,
            vectors: [document: vector],
            heads: [document: [history[11].hash]],
            devices: [
                Device(id: SampleChanges.first, name: "first", person: "Ben"),
                Device(id: FuzzIDs.key(3).id, name: "", person: "Cy"),
            ])
        seeds.append(SyncMessage.hello(people).encoded(format: SyncMessage.peopleFormatVersion))
        // And the initiator's hello again with the proof of its key, for the responder's session.
        let proving = SyncHello(
            device: people.device, session: 9, vectors: [:],
            proof: DeviceProof(signing: people.device, session: 42, with: FuzzIDs.key(2)))
        seeds.append(SyncMessage.hello(proving).encoded(format: SyncMessage.peopleFormatVersion))
        return seeds
    }
}
