// store-ingest: forged changes ingested between honest ones; honest peers must still converge.
// A store that takes changes from honest peers and from a liar. The input is a script: honest
// devices append and deliver their changes, the local device appends, and forged changes (built from fuzz-chosen
// device, seq, lamport, vector, parents and kind, or decoded from fuzz bytes) are ingested in between.
// Oracles: nothing traps; every store is sound (`verify()`) after the script; the local device can still append
// to every document; after the honest devices and the local one exchange what they lack, all three hold the same
// changes of every document (honest peers converge whatever the liar sent).
import FolioCore
import FolioStore
import Foundation

enum Harness {
    static let local = FuzzIDs.key(31).device(named: "local")
    static let honest = [FuzzIDs.key(32).device(named: "honest one"), FuzzIDs.key(33).device(named: "honest two")]
    /// The liar signs with her own key: her heads are authentic for her changes only.
    static let liarKey = FuzzIDs.key(34)
    static let liar = liarKey.id
    static let documents = [FuzzIDs.document(41), FuzzIDs.document(42)]

    /// Every store starts with the first honest device's creation of the first document and one edit of it.
    static let templates: [ChangeLogStore] = {
        do {
            let creator = try ChangeLogStore(
                inMemoryNamed: "honest one", key: FuzzIDs.key(32), deviceName: "honest one",
                clock: ManualClock(start: FuzzIDs.epoch))
            try creator.append(
                .lifecycle(.create(name: "Shared", type: "com.folio.text", container: .shared)), to: documents[0])
            try creator.append(.edit(Edit(operations: Data([1, 2, 2, 104, 105]))), to: documents[0])
            let start = try creator.changes(of: documents[0])
            var stores = [creator]
            let heads = try creator.signedHeads(of: documents[0])
            for (number, device) in [(UInt64(33), honest[1]), (31, local)] {
                let store = try ChangeLogStore(
                    inMemoryNamed: device.name, key: FuzzIDs.key(number), deviceName: device.name,
                    clock: ManualClock(start: FuzzIDs.epoch))
                try store.ingest(start, heads: heads)
                stores.append(store)
            }
            return stores
        } catch {
            fatalError("cannot make the template stores: \(error)")
        }
    }()

    static func run(_ input: UnsafeRawBufferPointer) {
        var fuzz = FuzzInput(input)
        let stores: [ChangeLogStore]
        do {
            stores = try templates.enumerated().map { try $1.copyInMemory(named: "copy \($0)") }
        } catch {
            fatalError("cannot copy the templates: \(error)")
        }
        let localStore = stores[2]
        var log: [String] = []
        var steps = 0
        while !fuzz.isAtEnd && steps < 48 {
            steps += 1
            let document = fuzz.pick(documents)
            switch fuzz.byte() % 6 {
            case 0:
                let index = fuzz.int(below: 2)
                do {
                    try stores[index].append(.edit(Edit(operations: Data(fuzz.bytes(upTo: 8)))), to: document)
                    log.append("honest \(index + 1) appends")
                } catch {
                    log.append("honest \(index + 1) could not append: \(error)")
                }
            case 1:
                let index = fuzz.int(below: 2)
                deliver(from: stores[index], to: localStore, document, &log)
            case 2:
                let index = fuzz.int(below: 2)
                deliver(from: localStore, to: stores[index], document, &log)
            case 3:
                do {
                    try localStore.append(.edit(Edit(operations: Data([0]))), to: document)
                    log.append("local appends")
                } catch {
                    log.append("local could not append: \(error)")
                }
            case 4:
                let forged = forge(document, in: localStore, &fuzz)
                let result = Result { try localStore.ingest([forged], heads: vouchers(for: forged, in: stores, &fuzz)) }
                log.append(
                    "forged \(forged.id) lamport \(forged.lamport) vector \(forged.vector): \(result.map { _ in "taken" })"
                )
            default:
                let bytes = fuzz.bytes(upTo: 160)
                if let forged = try? Change(decoding: bytes, document: document) {
                    let result = Result {
                        try localStore.ingest([forged], heads: vouchers(for: forged, in: stores, &fuzz))
                    }
                    log.append("decoded \(forged.id) lamport \(forged.lamport): \(result.map { _ in "taken" })")
                }
            }
        }
        let context = "after the script [\(log.joined(separator: "; "))]"
        for store in stores { StoreChecks.requireSound(store, "\(store.localDevice.name) \(context)") }
        StoreChecks.requireAppendWorks(localStore, "local \(context)")
        for round in 0..<2 {
            for source in stores {
                for target in stores where target !== source {
                    for document in documents { deliver(from: source, to: target, document, &log, quiet: round == 0) }
                }
            }
        }
        for store in stores { StoreChecks.requireSound(store, "\(store.localDevice.name) after the final exchange") }
        StoreChecks.requireConverged(stores, "honest devices after the final exchange [\(log.joined(separator: "; "))]")
    }

    /// Gives `target` the changes of `document` that `source` has and it lacks, as a sync would.
    static func deliver(
        from source: ChangeLogStore, to target: ChangeLogStore, _ document: DocumentID, _ log: inout [String],
        quiet: Bool = false
    ) {
        do {
            let missing = try source.changes(of: document, since: target.vector(of: document))
            if missing.isEmpty { return }
            try target.ingest(missing, heads: source.signedHeads(of: document))
            if !quiet { log.append("\(source.localDevice.name) → \(target.localDevice.name): \(missing.count)") }
        } catch {
            log.append("\(source.localDevice.name) → \(target.localDevice.name) failed: \(error)")
        }
    }

    /// The heads a liar sends with a forged change: none, her own signature over it (authentic only when the change
    /// is in her name), or honest heads she has seen.
    static func vouchers(for forged: Change, in stores: [ChangeLogStore], _ fuzz: inout FuzzInput) -> [SignedHead] {
        switch fuzz.byte() % 3 {
        case 0: return []
        case 1:
            return [
                SignedHead(
                    document: forged.document, change: forged.id, hash: forged.hash, publicKey: liarKey.publicKey,
                    signature: SignedHead(
                        document: forged.document, change: ChangeID(device: liar, seq: forged.id.seq),
                        hash: forged.hash, signedWith: liarKey
                    ).signature)
            ]
        default: return (try? fuzz.pick(stores).signedHeads(of: forged.document)) ?? []
        }
    }

    /// A change built from fuzz-chosen fields: whatever a liar may send, within what `Change` can represent.
    static func forge(_ document: DocumentID, in store: ChangeLogStore, _ fuzz: inout FuzzInput) -> Change {
        let known = (try? store.changes(of: document)) ?? []
        let heads = (try? store.heads(of: document)) ?? []
        let device = fuzz.pick([liar, liar, honest[0].id, honest[1].id, local.id, FuzzIDs.device(35)])
        var vector: VersionVector
        switch fuzz.byte() % 4 {
        case 0: vector = VersionVector()
        case 1: vector = (try? store.vector(of: document)) ?? VersionVector()
        case 2: vector = known.isEmpty ? VersionVector() : fuzz.pick(known).vector
        default: vector = heads.reduce(VersionVector()) { $0.merging($1.vector) }
        }
        for _ in 0..<fuzz.int(below: 3) {
            let entryDevice = fuzz.pick([liar, honest[0].id, honest[1].id, local.id])
            let entrySeq = fuzz.interestingUInt64()
            if entrySeq > 0 { vector.merge(VersionVector([(entryDevice, entrySeq)])) }
        }
        // Wrapping: a vector entry may already be at UInt64.max, and the harness must not trap where Folio would not.
        var seq = max(1, vector[device] &+ 1)
        if fuzz.bool() { seq = max(1, fuzz.interestingUInt64()) }
        var entries = vector.entries.filter { $0.device != device }
        entries.append(VersionVector.Entry(device: device, seq: seq))
        vector = VersionVector(entries.map { ($0.device, $0.seq) })
        var parents: Set<ChangeHash> = []
        switch fuzz.byte() % 4 {
        case 0: break
        case 1: parents.formUnion(heads.map(\.hash))
        case 2: if !known.isEmpty { parents.insert(fuzz.pick(known).hash) }
        default: parents.insert(ChangeHash(bytes: (0..<32).map { _ in fuzz.byte() }))
        }
        let next = max(1, (known.map(\.lamport).max() ?? 0) &+ 1)
        let lamport: UInt64 = fuzz.bool() ? max(1, fuzz.interestingUInt64()) : next
        let kind: ChangeKind
        switch fuzz.byte() % 8 {
        case 0:
            kind = .lifecycle(
                .create(
                    name: fuzz.string(upTo: 20), type: fuzz.pick(["com.folio.text", "com.folio.pages", "?"]),
                    container: .shared))
        case 1: kind = .lifecycle(.rename(to: fuzz.string(upTo: 20)))
        case 2: kind = .lifecycle(fuzz.pick([.delete, .restore, .move(to: .local)]))
        case 3: kind = .baseline(contents: Data(fuzz.bytes(upTo: 24)))
        case 4:
            let chosen = known.isEmpty ? [] : [fuzz.pick(known).hash]
            kind = .resolution(
                Resolution(
                    strategy: fuzz.pick([.latestWins, .userChoice, .custom("x")]), chosen: chosen,
                    discarded: heads.map(\.hash)))
        case 5:
            let target = known.isEmpty ? ChangeID(device: device, seq: 1) : fuzz.pick(known).id
            kind = .edit(
                Edit(operations: Data(fuzz.bytes(upTo: 8)), intent: fuzz.bool() ? .undo(of: target) : .redo(of: target))
            )
        default: kind = .edit(Edit(operations: Data(fuzz.bytes(upTo: 8))))
        }
        let wallTime = Timestamp(
            millisecondsSince1970: fuzz.bool()
                ? Int64(bitPattern: fuzz.interestingUInt64()) : FuzzIDs.epoch.millisecondsSince1970)
        return Change(
            document: document, id: ChangeID(device: device, seq: seq), parents: Array(parents), vector: vector,
            lamport: lamport, wallTime: wallTime, kind: kind)
    }

    static func seeds() -> [[UInt8]] {
        [
            // Honest traffic only: appends and deliveries both ways.
            [0, 0, 0, 3, 1, 2, 0, 1, 0, 0, 0, 3, 0, 0, 1, 3, 0, 2, 1, 0, 0, 1, 2],
            // A forged change from the liar on the heads, then honest traffic.
            [0, 4, 0, 3, 0, 1, 0, 0, 0, 0, 1, 0, 3, 0, 0, 1, 0, 1, 0, 0, 3],
            // A forged change with fuzz-chosen extremes.
            [1, 4, 2, 1, 1, 4, 0, 1, 1, 4, 0, 1, 4, 3, 1, 0, 0, 2, 3, 0, 1, 3],
            // A change decoded from bytes: the sample's first change.
            [0, 5, UInt8(SampleChanges.history(of: documents[0])[2].encoded().count)]
                + SampleChanges.history(of: documents[0])[2].encoded(),
        ]
    }
}
