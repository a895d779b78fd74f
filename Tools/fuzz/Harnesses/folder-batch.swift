// folder-batch: a batch file planted in a shared sync folder, then real syncs through that folder.
// A batch file planted in a shared sync folder. The input is the file without its writer's signature and its trailing
// SHA-256, which the harness appends, signing as the third device (an attacker with a key of her own who recomputes
// the checksum): files in the third device's name are taken, files in an honest device's name must be refused.
// Oracles: `FolderBatch(decoding:)` never traps; a batch that decodes re-encodes to the same file; planted in the
// folder (under the directory and name it claims), a real `FolderTransport` sync of an honest device reads it
// without trapping, leaves its store sound and able to append, a second sync (which reads the cursor the first
// one left) works as well, and two honest devices syncing through the folder afterwards converge.
import FolioCore
import FolioStore
import Foundation

@testable import FolioSync

enum Harness {
    static let first = FuzzIDs.key(11).device(named: "first")
    static let second = FuzzIDs.key(12).device(named: "second")
    static let history = SampleChanges.history()

    /// The first device: the sample history and a document of its own.
    static let firstTemplate: ChangeLogStore = {
        do {
            let store = try ChangeLogStore(
                inMemoryNamed: "first", key: FuzzIDs.key(11), deviceName: "first",
                clock: ManualClock(start: FuzzIDs.epoch))
            try store.ingest(history, heads: SampleChanges.heads(of: history))
            try store.append(
                .lifecycle(.create(name: "First", type: "com.folio.text", container: .shared)), to: FuzzIDs.document(11)
            )
            try store.append(.edit(Edit(operations: Data([1, 2, 1, 65]))), to: FuzzIDs.document(11))
            return store
        } catch {
            fatalError("cannot make the first device's store: \(error)")
        }
    }()

    /// The second device: a document of its own.
    static let secondTemplate: ChangeLogStore = {
        do {
            let store = try ChangeLogStore(
                inMemoryNamed: "second", key: FuzzIDs.key(12), deviceName: "second",
                clock: ManualClock(start: FuzzIDs.epoch))
            try store.append(
                .lifecycle(.create(name: "Second", type: "com.folio.text", container: .shared)),
                to: FuzzIDs.document(12))
            return store
        } catch {
            fatalError("cannot make the second device's store: \(error)")
        }
    }()

    static func run(_ input: UnsafeRawBufferPointer) {
        let body = Array(input)
        let signed = body + attacker.publicKey.bytes + attacker.signature(for: FolderBatch.signedBytes(ofBody: body))
        let file = signed + ChangeHash(hashing: signed).bytes
        guard let batch = try? FolderBatch(decoding: file) else { return }
        require(batch.writer.id == attacker.id, "a file signed by the third device was taken as another writer's")
        require(batch.encoded(signedWith: attacker) == file, "a decoded batch re-encodes to another file")

        let root = ScratchDirectory.fresh("folder")
        let transport = FolderTransport(root: root, changesPerFile: 4, identifiers: SeededIdentifierSource(seed: 1))
        let firstStore: ChangeLogStore
        let secondStore: ChangeLogStore
        do {
            firstStore = try firstTemplate.copyInMemory(named: "first")
            secondStore = try secondTemplate.copyInMemory(named: "second")
        } catch {
            fatalError("cannot copy the templates: \(error)")
        }
        // The first device publishes its history, then the batch is planted where its name and writer say.
        var log: [String] = []
        func sync(_ store: ChangeLogStore, _ step: String) {
            do {
                let report = try transport.sync(store)
                log.append("\(step): \(report.problems.isEmpty ? "complete" : report.problems.joined(separator: "; "))")
            } catch {
                log.append("\(step): threw \(error)")
            }
        }
        sync(firstStore, "first device's export")
        let directory = root.appendingPathComponent(batch.writer.id.description).appendingPathComponent(
            batch.document.description)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            // A name the writer already used is left as it is: the planted file takes the place of a later one.
            let url = directory.appendingPathComponent(batch.fileName)
            if !FileManager.default.fileExists(atPath: url.path) { try Data(file).write(to: url) }
        } catch {
            fatalError("cannot plant the batch: \(error)")
        }
        sync(secondStore, "second device's sync")
        StoreChecks.requireSound(secondStore, "after reading the planted batch")
        sync(secondStore, "second device's second sync")
        StoreChecks.requireSound(secondStore, "after reading the folder again")
        StoreChecks.requireAppendWorks(secondStore, "after reading the planted batch")
        StoreChecks.requireAppendWorks(firstStore, "on the first device")
        sync(secondStore, "second device's sync after appending")
        sync(firstStore, "first device's sync")
        sync(secondStore, "second device's last sync")
        StoreChecks.requireSound(firstStore, "on the first device after the syncs")
        StoreChecks.requireConverged(
            [firstStore, secondStore],
            "honest devices synced through a folder holding a planted batch (\(log.joined(separator: " | ")))")
    }

    /// The key the harness signs planted files with: the third device's.
    static let attacker = FuzzIDs.key(13)

    static func seeds() -> [[UInt8]] {
        let writer = attacker.device(named: "third")
        let document = SampleChanges.document
        var seeds: [[UInt8]] = []
        var exported = VersionVector()
        var first: UInt64 = 1
        for chunk in [history[0..<4], history[4..<9], history[9...]] {
            for change in chunk { exported.merge(change.vector) }
            let batch = FolderBatch(
                writer: writer, document: document, first: first, last: exported.changeCount, vector: exported,
                devices: [first == 1 ? Device(id: SampleChanges.first, name: "sample") : writer],
                changes: chunk.map(EncodedChange.init), heads: SampleChanges.heads(of: Array(chunk)))
            first = exported.changeCount + 1
            seeds.append(Array(batch.encoded(signedWith: attacker).dropLast(32 + 96)))
        }
        // One of another document.
        let other = FolderBatch(
            writer: writer, document: FuzzIDs.document(5), first: 1, last: 2,
            vector: history[1].vector, devices: [second],
            changes: Array(SampleChanges.history(of: FuzzIDs.document(5)).prefix(2)).map(EncodedChange.init),
            heads: SampleChanges.heads(of: Array(SampleChanges.history(of: FuzzIDs.document(5)).prefix(2))))
        seeds.append(Array(other.encoded(signedWith: attacker).dropLast(32 + 96)))
        return seeds
    }
}
