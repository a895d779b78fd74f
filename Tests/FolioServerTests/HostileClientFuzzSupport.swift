import Folio
import FolioClient
import FolioCore
import FolioSync
import Foundation
import Logging
import NIOCore
import Synchronization
import WSClient

/// One hostile connection of a round of ``HostileClientFuzzTests``: the frames it sends, and what it does after.
struct FuzzConnection {
    /// What a connection does once its frames are sent.
    enum Ending {
        /// Reads what the server sends until the server closes or the duration passes.
        case read(Duration)
        /// Never reads (a burst without reading) until the duration passes.
        case stall(Duration)
    }

    var messages: [RawClient.Message] = []
    var ending: Ending = .read(.zero)
    /// The grammar's name of each frame, for a failure's report.
    var kinds: [String] = []
}

/// Draws hostile connections from a grammar of frames, all from one seed: the same seed and the same honest devices
/// give the same frames, byte for byte (keys, documents and texts come from the generator too).
struct FuzzGrammar {
    /// A hostile device: its key, and the changes it made per document (sent or not: the grammar does not know what
    /// the server kept).
    struct Actor {
        let key: DeviceKey
        var chains: [DocumentID: [Change]] = [:]
    }

    /// The kinds of frames, with their weights.
    enum Kind: String, CaseIterable {
        case hello, claimingHello, replyHello, request, done, signedChanges, unsignedChanges, corruptedHead, replay,
            forgedChange, forgedSignedChange, notice, text, truncated, bitFlipped, garbage, lamportPastLimit,
            otherChannel, largeChange, oversized

        var weight: Int {
            switch self {
            case .signedChanges: 30
            case .unsignedChanges: 10
            case .request: 8
            case .hello, .replay: 5
            case .done, .claimingHello: 4
            case .corruptedHead, .forgedChange, .otherChannel, .bitFlipped: 3
            case .forgedSignedChange, .truncated, .garbage, .replyHello, .notice, .text, .lamportPastLimit: 1
            case .largeChange: 1
            case .oversized: 0  // drawn apart, rarely: see `connection()`
            }
        }

        /// Whether the server closes the connection for it (or may: a flipped bit may land anywhere). The grammar
        /// ends a connection's frames there, and forgets the changes it drew for it, so that the hostile devices'
        /// later changes do not all wait for parents the server never took.
        var isFatal: Bool {
            switch self {
            case .claimingHello, .replyHello, .corruptedHead, .forgedSignedChange, .notice, .text, .truncated,
                .bitFlipped, .garbage, .lamportPastLimit, .otherChannel, .oversized:
                true
            case .hello, .request, .done, .signedChanges, .unsignedChanges, .replay, .forgedChange, .largeChange:
                false
            }
        }
    }

    private(set) var random: SplitMix64
    private let source: SeededIdentifierSource
    private var actors: [Actor]
    /// The documents the hostile devices write to (few, so that chains grow and cross).
    let documents: [DocumentID]
    /// Devices the hostile clients claim in hellos: the honest ones and each other.
    private let claimed: [DeviceID]
    /// Frames sent before, for replays (the latest 64).
    private var sent: [[UInt8]] = []
    /// Bytes of change bodies drawn so far: large changes stop past a bound, so that the library stays under its
    /// quota and the honest devices' writes are not refused for space.
    private var bodyBytes = 0
    private let bodyBudget: Int

    /// The grammar of hostile client `slot` of `slots`, claiming the `honest` devices among others. Every slot writes
    /// to the same documents, each under two devices of its own whose histories cross.
    init(seed: UInt64, slot: Int, slots: Int, honest: [DeviceID], bodyBudget: Int) {
        random = SplitMix64(seed: seed &+ UInt64(slot + 1) &* 0x9E37_79B9_7F4A_7C15)
        let documents = SeededIdentifierSource(seed: seed ^ 0xD0C5)
        self.documents = (0..<12).map { _ in DocumentID(using: documents) }
        let sources = (0..<slots).map { SeededIdentifierSource(seed: seed ^ 0xDE71_CE00 &+ UInt64($0)) }
        let keys = sources.map { source in (0..<2).map { _ in DeviceKey(using: source) } }
        source = sources[slot]
        actors = keys[slot].map { Actor(key: $0) }
        claimed = honest + keys.flatMap { $0.map(\.id) }
        self.bodyBudget = bodyBudget
    }

    // MARK: Drawing

    private mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
    private mutating func chance(_ probability: Double) -> Bool {
        Double(random.next() >> 11) / Double(1 << 53) < probability
    }
    private mutating func pick<T>(_ values: [T]) -> T { values[int(0...values.count - 1)] }
    private mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }
    private mutating func uuid() -> UUIDBytes { UUIDBytes(high: random.next(), low: random.next()) }
    private mutating func text(_ count: Int) -> String {
        String(decoding: (0..<count).map { _ in UInt8(0x61 + random.next() % 26) }, as: UTF8.self)
    }

    private mutating func kind() -> Kind {
        let total = Kind.allCases.reduce(0) { $0 + $1.weight }
        var draw = int(0...total - 1)
        for kind in Kind.allCases {
            if draw < kind.weight { return kind }
            draw -= kind.weight
        }
        return .signedChanges
    }

    /// The next connection of the hostile client, speaking for one of its devices: mostly a hello of that device first, then a few frames of the
    /// grammar; it then reads for a while, closes at once, or stalls.
    mutating func connection() -> FuzzConnection {
        let actor = int(0...actors.count - 1)
        // Now and then the client becomes a new device.
        if chance(0.05) { actors[actor] = Actor(key: DeviceKey(using: source)) }
        var connection = FuzzConnection()
        let session = random.next()
        let atStart = actors
        let greets = chance(0.9)
        if greets {
            append(hello(actor: actor, session: session), kind: "hello", to: &connection)
        }
        for _ in 0..<int(0...10) {
            let kind = kind()
            let before = actors
            append(
                frame(kind, actor: actor, session: session), kind: kind.rawValue, to: &connection, keep: !kind.isFatal)
            if kind.isFatal {
                actors = before
                break
            }
        }
        // Without a hello, the server closes the connection at its first message of a session.
        if !greets { actors = atStart }
        if chance(0.01) {
            connection.messages.append(.binary(Array(repeating: 1, count: (16 << 20) + 1)))
            connection.kinds.append(Kind.oversized.rawValue)
        }
        switch int(0...9) {
        case 0...6: connection.ending = .read(.milliseconds(int(50...800)))
        case 7...8: connection.ending = .stall(.milliseconds(int(300...2500)))
        default: connection.ending = .read(.zero)
        }
        return connection
    }

    /// Appends a frame to `connection`, and keeps it for replays when `keep`.
    private mutating func append(
        _ message: RawClient.Message, kind: String, to connection: inout FuzzConnection, keep: Bool = true
    ) {
        connection.messages.append(message)
        connection.kinds.append(kind)
        if keep, case .binary(let bytes) = message, bytes.count < 1 << 20 {
            sent.append(bytes)
            if sent.count > 64 { sent.removeFirst() }
        }
    }

    private mutating func frame(_ kind: Kind, actor: Int, session: UInt64) -> RawClient.Message {
        switch kind {
        case .hello: return hello(actor: actor, session: random.next())
        case .claimingHello:
            let device = Device(id: pick(claimed), name: text(int(0...40)))
            return .binary(
                SyncFrame.encode(.hello(SyncHello(device: device, session: session, vectors: [:])), on: session))
        case .replyHello:
            let hello = SyncHello(
                device: actors[actor].key.device(named: "reply"), session: session, replyTo: random.next(), vectors: [:]
            )
            return .binary(SyncFrame.encode(.hello(hello), on: session))
        case .request:
            let document = chance(0.7) ? pick(documents) : DocumentID(uuid())
            return .binary(SyncFrame.encode(.request(document: document, since: vector()), on: session))
        case .done:
            let from = chance(0.5) ? session : random.next()
            return .binary(SyncFrame.encode(.done(from: from, to: random.next()), on: session))
        case .signedChanges: return .binary(changes(actor: actor, session: session, signed: true, size: 0...200))
        case .unsignedChanges: return .binary(changes(actor: actor, session: session, signed: false, size: 0...200))
        case .largeChange:
            let size = bodyBytes < bodyBudget ? 64 << 10...1 << 20 : 0...200
            return .binary(changes(actor: actor, session: session, signed: true, size: size))
        case .corruptedHead: return .binary(corruptedHead(actor: actor, session: session))
        case .replay: return .binary(sent.isEmpty ? hello(actor: actor, session: session).bytes : pick(sent))
        case .forgedChange: return .binary(forged(actor: actor, session: session, signed: false))
        case .forgedSignedChange: return .binary(forged(actor: actor, session: session, signed: true))
        case .notice: return .binary(SyncFrame.notice(document: pick(documents), vector: vector()).encoded())
        case .text: return .text(text(int(0...100)))
        case .truncated:
            let whole = changes(actor: actor, session: session, signed: true, size: 0...200)
            return .binary(Array(whole.prefix(int(0...whole.count - 1))))
        case .bitFlipped:
            var bytes = changes(actor: actor, session: session, signed: chance(0.5), size: 0...200)
            for _ in 0..<int(1...3) { bytes[int(0...bytes.count - 1)] ^= UInt8(1) << UInt8(int(0...7)) }
            return .binary(bytes)
        case .garbage: return .binary(bytes(int(1...64)))
        case .lamportPastLimit:
            var change = next(actor: actor, document: pick(documents), size: 0...20)
            change = Change(
                document: change.document, id: change.id, parents: change.parents, vector: change.vector,
                lamport: ChangeLimits.counter, wallTime: change.wallTime, kind: change.kind)
            return .binary(encode([change], heads: [SignedHead(signing: change, with: actors[actor].key)], session))
        case .otherChannel:
            return .binary(changes(actor: actor, session: random.next(), signed: true, size: 0...200))
        case .oversized: return .binary(Array(repeating: 1, count: (16 << 20) + 1))
        }
    }

    // MARK: Messages

    /// A hello of `actor`'s device, announcing random documents (rarely a few thousand) and random devices.
    private mutating func hello(actor: Int, session: UInt64) -> RawClient.Message {
        let count = chance(0.05) ? int(500...3_000) : int(0...20)
        var vectors: [DocumentID: VersionVector] = [:]
        for _ in 0..<count {
            vectors[chance(0.5) ? pick(documents) : DocumentID(uuid())] = vector()
        }
        var heads: [DocumentID: [ChangeHash]] = [:]
        for (document, chain) in actors[actor].chains where chance(0.3) {
            heads[document] = chain.suffix(1).map(\.hash)
        }
        let devices = (0..<(chance(0.2) ? int(1...50) : 0)).map { _ in
            Device(id: chance(0.5) ? pick(claimed) : DeviceID(uuid()), name: text(int(0...200)))
        }
        let hello = SyncHello(
            device: actors[actor].key.device(named: text(int(0...30))), session: session, vectors: vectors,
            heads: heads, devices: devices)
        return .binary(SyncFrame.encode(.hello(hello), on: session))
    }

    /// A random vector of a few devices, hostile or honest, with small or huge counters.
    private mutating func vector() -> VersionVector {
        let entries = (0..<int(0...3)).map { _ in
            (pick(claimed), chance(0.9) ? UInt64(int(1...8)) : UInt64(int(1...1 << 40)))
        }
        return VersionVector(Dictionary(entries, uniquingKeysWith: max).map { ($0.key, $0.value) })
    }

    /// `actor`'s next change of `document`: on its own last change there and, sometimes, another device's last
    /// one (so that histories cross); a creation first, then appends of random text.
    private mutating func next(actor: Int, document: DocumentID, size: ClosedRange<Int>) -> Change {
        let own = actors[actor].chains[document] ?? []
        var parents = own.suffix(1)
        if chance(0.25) {
            let other = int(0...actors.count - 1)
            if other != actor, let last = actors[other].chains[document]?.last { parents.append(last) }
        }
        var vector = parents.reduce(VersionVector()) { $0.merging($1.vector) }
        let seq = UInt64(own.count + 1)
        vector[actors[actor].key.id] = seq
        let length = int(size)
        bodyBytes += length
        let kind: ChangeKind =
            parents.isEmpty
            ? .lifecycle(.create(name: text(int(1...12)), type: "public.plain-text", container: .shared))
            : .edit(Edit(operations: TextDocument.Operation.encodeGroup([.append(text(length))])))
        let change = Change(
            document: document, id: ChangeID(device: actors[actor].key.id, seq: seq), parents: parents.map(\.hash),
            vector: vector, lamport: (parents.map(\.lamport).max() ?? 0) + 1,
            wallTime: Timestamp(millisecondsSince1970: 1_700_000_000_000 + Int64(seq)), kind: kind)
        actors[actor].chains[document, default: []].append(change)
        return change
    }

    private func encode(_ changes: [Change], heads: [SignedHead], _ channel: UInt64) -> [UInt8] {
        let document = changes[0].document
        return SyncFrame.encode(
            .changes(document: document, changes: changes.map(EncodedChange.init), heads: heads), on: channel)
    }

    /// One to four new changes of `actor` on a document of the pool, with a head of its last one when `signed`.
    private mutating func changes(actor: Int, session: UInt64, signed: Bool, size: ClosedRange<Int>) -> [UInt8] {
        let document = pick(documents)
        let changes = (0..<int(1...4)).map { _ in next(actor: actor, document: document, size: size) }
        let heads = signed ? [SignedHead(signing: changes[changes.count - 1], with: actors[actor].key)] : []
        return encode(changes, heads: heads, session)
    }

    /// New changes of `actor` with a head that does not check: its signature or hash altered, another device's key,
    /// or a head for another device's change.
    private mutating func corruptedHead(actor: Int, session: UInt64) -> [UInt8] {
        let document = pick(documents)
        let changes = (0..<int(1...3)).map { _ in next(actor: actor, document: document, size: 0...100) }
        let last = changes[changes.count - 1]
        let good = SignedHead(signing: last, with: actors[actor].key)
        let other = actors[(actor + 1) % actors.count].key
        var signature = good.signature
        let head: SignedHead
        switch int(0...3) {
        case 0:
            signature[int(0...63)] ^= 0x01
            head = SignedHead(
                document: document, change: good.change, hash: good.hash, publicKey: good.publicKey,
                signature: signature)
        case 1:
            head = SignedHead(
                document: document, change: good.change, hash: ChangeHash(bytes: bytes(32)),
                publicKey: good.publicKey, signature: signature)
        case 2:
            head = SignedHead(
                document: document, change: good.change, hash: good.hash, publicKey: other.publicKey,
                signature: other.signature(for: good.signedBytes))
        default:
            head = SignedHead(
                document: document, change: ChangeID(device: other.id, seq: last.id.seq), hash: good.hash,
                publicKey: good.publicKey, signature: signature)
        }
        return encode(changes, heads: [head], session)
    }

    /// A change under an identity `actor` already used, with other content; signed, it is its key signing two
    /// changes under one identity.
    private mutating func forged(actor: Int, session: UInt64, signed: Bool) -> [UInt8] {
        let document = pick(documents)
        guard let chain = actors[actor].chains[document], !chain.isEmpty else {
            return changes(actor: actor, session: session, signed: signed, size: 0...50)
        }
        let original = pick(chain)
        let kind = ChangeKind.edit(Edit(operations: TextDocument.Operation.encodeGroup([.append(text(int(1...50)))])))
        let forged = Change(
            document: document, id: original.id, parents: original.parents, vector: original.vector,
            lamport: original.lamport, wallTime: original.wallTime, kind: kind)
        return encode([forged], heads: signed ? [SignedHead(signing: forged, with: actors[actor].key)] : [], session)
    }
}

extension RawClient.Message {
    /// The bytes of a binary message (a text message's UTF-8).
    var bytes: [UInt8] {
        switch self {
        case .binary(let bytes): bytes
        case .text(let text): Array(text.utf8)
        }
    }
}

// MARK: The listener

/// A device that only says hello and records every frame the server pushes to it, for as long as it runs; when the
/// server closes it, it connects again (as a new device) and counts its connections.
final class FuzzListener: Sendable {
    private struct State {
        var frames: [[UInt8]] = []
        var connections = 0
        var stopped = false
    }

    private let state = Mutex(State())
    private let url: String
    private let token: String

    init(_ server: URL, token: String) {
        url = server.absoluteString + "/sync"
        self.token = token
    }

    /// The frames received so far, in order.
    var frames: [[UInt8]] { state.withLock { $0.frames } }
    /// The connections it opened.
    var connections: Int { state.withLock { $0.connections } }
    private var stopped: Bool { state.withLock { $0.stopped } }

    /// Ends ``run()``.
    func stop() { state.withLock { $0.stopped = true } }

    /// Listens until ``stop()``.
    func run() async {
        while !stopped {
            state.withLock { $0.connections += 1 }
            var configuration = WebSocketClientConfiguration(
                maxFrameSize: 32 << 20, additionalHeaders: [.authorization: "Bearer \(token)"])
            configuration.autoPing = .disabled
            let client = WebSocketClient(url: url, configuration: configuration, logger: Logger(label: "listener")) {
                inbound, outbound, _ in
                try await outbound.write(.binary(ByteBuffer(bytes: HandDevice().hello())))
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        do {
                            for try await message in inbound.messages(maxSize: 32 << 20) {
                                if case .binary(let buffer) = message {
                                    self.state.withLock { $0.frames.append(Array(buffer.readableBytesView)) }
                                }
                            }
                        } catch {}
                    }
                    group.addTask {
                        while !self.stopped { try? await Task.sleep(for: .milliseconds(50)) }
                    }
                    await group.next()
                    group.cancelAll()
                }
            }
            _ = try? await client.run()
            if !stopped { try? await Task.sleep(for: .milliseconds(100)) }
        }
    }
}

// MARK: The honest devices

/// Two honest devices, a phone and a laptop, that write notes, append lines to their own and each other's, and sync
/// through the server now and then; their edits come from the seed too.
struct HonestDevices: Sendable {
    let phone: DocumentLibrary
    let laptop: DocumentLibrary
    let endpoint: ServerEndpoint
    let seed: UInt64
    /// The notes, in the order they were created.
    private(set) var notes: [DocumentID] = []
    /// The lines appended to each note (its first line included).
    private(set) var lines: [DocumentID: [String]] = [:]
    private var created = [0, 0]
    private var syncs = 0
    private var failedSyncs = 0
    private var hungSyncs = 0
    private var incompleteSyncs = 0
    /// What went wrong on a device itself (not at the server).
    private var problems: [String] = []

    init(phone: DocumentLibrary, laptop: DocumentLibrary, endpoint: ServerEndpoint, seed: UInt64) {
        self.phone = phone
        self.laptop = laptop
        self.endpoint = endpoint
        self.seed = seed
    }

    /// A line for the run's report.
    var summary: String {
        "\(notes.count) notes, \(lines.values.reduce(0) { $0 + $1.count }) lines, \(syncs) syncs during the attack "
            + "(\(failedSyncs) failed, \(incompleteSyncs) incomplete, \(hungSyncs) without an answer in 10 s)"
    }

    /// Edits and syncs until `deadline`.
    mutating func run(until deadline: ContinuousClock.Instant) async {
        var random = SplitMix64(seed: seed ^ 0x4045_E57D_0000_0000)
        var step = 0
        while ContinuousClock.now < deadline {
            step += 1
            let which = Int(random.next() % 2)
            let library = which == 0 ? phone : laptop
            let line = (which == 0 ? "phone " : "laptop ") + "\(step)"
            do {
                let known = try notes.filter { try library.catalogInfo(of: $0) != nil }
                if known.isEmpty || (created[which] < 3 && random.next() % 4 == 0) {
                    let note = try await library.create(
                        TextDocument.self, named: "Note \(step)", in: .shared, contents: TextDocument(text: line + "\n")
                    )
                    notes.append(note.id)
                    lines[note.id] = [line]
                    created[which] += 1
                } else {
                    let id = known[Int(random.next() % UInt64(known.count))]
                    let note = try await library.open(id, as: TextDocument.self)
                    try await note.edit([.append(line + "\n")])
                    lines[id, default: []].append(line)
                }
            } catch {
                problems.append("the \(which == 0 ? "phone" : "laptop") failed to write \(line): \(error)")
            }
            if random.next() % 2 == 0 {
                syncs += 1
                do {
                    let report = try await sync(library)
                    if !report.isComplete { incompleteSyncs += 1 }
                } catch is FuzzTimeout {
                    hungSyncs += 1
                } catch {
                    failedSyncs += 1
                }
            }
            try? await Task.sleep(for: .milliseconds(Int64(100 + random.next() % 300)))
        }
    }

    /// One sync of `library` with the server, given up after 10 s (and left to run; a sync takes well under a second here).
    private func sync(_ library: DocumentLibrary) async throws -> SyncReport {
        let endpoint = endpoint
        let label = library === phone ? "phone" : "laptop"
        fuzzTrace("sync of \(label) starts")
        let result: Result<SyncReport, any Error>? = await firstOf(.seconds(10)) {
            do { return .success(try await library.sync(through: WebSocketTransport(endpoint: endpoint))) } catch {
                return .failure(error)
            }
        }
        fuzzTrace("sync of \(label) ends: \(result.map { "\($0)" } ?? "hung")")
        guard let result else { throw FuzzTimeout() }
        return try result.get()
    }

    /// Syncs `library` until a sync is complete, at most three times a second apart (the server may be busy for a
    /// moment, 1013); what went wrong, or nil. A sync that hangs is not tried again.
    func syncUntilComplete(_ library: DocumentLibrary) async -> String? {
        var problem = ""
        for attempt in 0..<3 {
            if attempt > 0 { try? await Task.sleep(for: .seconds(1)) }
            do {
                let report = try await sync(library)
                if report.isComplete { return nil }
                problem = "incomplete: \(report)"
            } catch let timeout as FuzzTimeout {
                return "\(timeout)"
            } catch {
                problem = "\(error)"
            }
        }
        return problem
    }

    /// What differs between the two devices once both synced: vectors of a document both hold, the documents each
    /// holds, the texts of the notes, and lines missing from them.
    func convergenceProblems() async -> [String] {
        var found = problems
        do {
            let onPhone = Dictionary(try phone.store.summaries().map { ($0.document, $0.vector) }) { first, _ in first }
            let onLaptop = Dictionary(try laptop.store.summaries().map { ($0.document, $0.vector) }) { first, _ in first
            }
            for (document, vector) in onPhone {
                if let other = onLaptop[document], other != vector {
                    found.append("document \(document) is at \(vector) on the phone and at \(other) on the laptop")
                }
            }
            let onlyOne = Set(onPhone.keys).symmetricDifference(onLaptop.keys)
            if !onlyOne.isEmpty {
                found.append("\(onlyOne.count) documents are on one device only: \(onlyOne.prefix(4))")
            }
            for note in notes {
                let text = try await phone.open(note, as: TextDocument.self).model.text
                let copy = try await laptop.open(note, as: TextDocument.self).model.text
                if text != copy {
                    found.append(
                        "note \(note) reads \(text.debugDescription) on the phone, \(copy.debugDescription) on the laptop"
                    )
                }
                let present = Set(text.split(separator: "\n").map(String.init))
                let missing = (lines[note] ?? []).filter { !present.contains($0) }
                if !missing.isEmpty { found.append("note \(note) lacks the lines \(missing)") }
            }
        } catch {
            found.append("comparing the devices failed: \(error)")
        }
        return found
    }
}

/// A sync of an honest device that did not end in time.
struct FuzzTimeout: Error, CustomStringConvertible {
    var description: String { "the sync did not end within 10 s" }
}

/// `body`'s value, or nil if `timeout` passes first; then `body` is left to run (a hang is reported, not waited for).
func firstOf<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async -> T) async -> T? {
    await withCheckedContinuation { continuation in
        let resumed = Mutex(false)
        let resume = { @Sendable (value: T?) in
            if resumed.withLock({ done in
                defer { done = true }
                return !done
            }) {
                continuation.resume(returning: value)
            }
        }
        Task { resume(await body()) }
        Task {
            try? await Task.sleep(for: timeout)
            resume(nil)
        }
    }
}

/// A line added to the file `FOLIO_HOSTILE_FUZZ_TRACE` names, if it does, to see where a run stands (`swift test`
/// holds back a test's output until it ends).
func fuzzTrace(_ line: @autoclosure () -> String) {
    fuzzTraceFile?.write("\(Date().timeIntervalSince1970) \(line())\n")
}

private let fuzzTraceFile = FuzzTraceFile(path: ProcessInfo.processInfo.environment["FOLIO_HOSTILE_FUZZ_TRACE"])

private final class FuzzTraceFile: Sendable {
    private let handle: Mutex<FileHandle?>

    init?(path: String?) {
        guard let path, FileManager.default.createFile(atPath: path, contents: nil) else { return nil }
        handle = Mutex(FileHandle(forWritingAtPath: path))
    }

    func write(_ line: String) { handle.withLock { $0?.write(Data(line.utf8)) } }
}
