import Folio
import FolioClient
import FolioCore
import FolioServer
import FolioStore
import FolioSync
import FolioTesting
import Foundation
import Synchronization
import Testing

/// A hostile-client fuzz target (issue 36): random frame sequences from several authenticated connections at once
/// against a real `folio serve`, with the server's invariants checked after each seed.
///
/// Per seed, a server starts with small budgets (``serverArguments``) and a library `notes`. At once, for
/// ``attackSeconds`` (4 s):
/// - ``slots`` hostile raw connections each open connection after connection, sending frames drawn from
///   ``FuzzGrammar`` (valid hellos announcing up to a few thousand documents, hellos naming other devices, requests,
///   `done`s, signed and unsigned changes, corrupted heads, replays, forged changes under used identities, notices,
///   text frames, truncated and bit-flipped frames, rarely an oversized one), then read for a while, close at once,
///   or stall (send without reading);
/// - a listener that only says hello and records every frame the server pushes;
/// - two honest devices (a phone and a laptop) that write notes, append to each other's, and sync through the server.
///
/// Then both honest devices sync until complete, and the invariants are checked:
/// 1. the server's process is alive, and its peak memory (VmHWM) stayed under its memory budget plus 200 MiB;
/// 2. the honest devices converge: equal vectors for every document both hold, equal texts of their notes, and every
///    line either appended is in them;
/// 3. nothing unvouched was relayed: the listener's `changes` messages, ingested in order into a fresh store, bring
///    no refused head and no rejected change, and leave no change waiting for a head (one whose dependencies are all
///    in the log); changes waiting for parents (the listener joined late or was cut off) are fine;
/// 4. `/health` answers `ok`.
///
/// A failure names its seed (`seed 0x…: …`). The frames of a seed are the same on every run (keys, documents and
/// texts come from the seed's generators; the honest devices' edits too), though their timing against the server is
/// not. To replay a seed: `FOLIO_HOSTILE_FUZZ_SEED=0x… swift test --filter HostileClientFuzzTests` (a comma-separated
/// list works too). To run longer: `FOLIO_HOSTILE_FUZZ_SEEDS=20` adds 20 random seeds (each printed as it starts),
/// and `FOLIO_HOSTILE_FUZZ_SECONDS=60` attacks for 60 s per seed (the fixed table included).
@Suite(.serialized) struct HostileClientFuzzTests {
    /// The seeds every run checks: about 8 s a seed on two cores in a debug build, 25 s in all. 0x36F055ED00000001
    /// and 0x36F055ED00000002 found changes a store logged with no head that reaches them (their head's own change
    /// waited), which left honest devices unable to complete a sync; `WaitingHeadTests` pins that down in the store.
    static let seeds: [UInt64] = [0x36F0_55ED_0000_0001, 0x36F0_55ED_0000_0002, 0x36F0_55ED_0000_0003]

    /// Hostile connections at once.
    static let slots = 4
    /// The server's budget for what its clients make it hold.
    static let memoryBudget = 64 << 20
    /// Small budgets, so that the bounds are reached within a few seconds.
    static let serverArguments = [
        "--memory-budget", "\(memoryBudget)", "--documents-per-library", "2000", "--library-quota", "\(64 << 20)",
        // The hello timeout is long enough for the listener's and the devices' hellos on a loaded machine.
        "--stall-timeout", "2", "--hello-timeout", "30",
    ]
    /// The bound on the server's peak resident memory.
    static let memoryBound = memoryBudget + (200 << 20)

    static var attackSeconds: Double {
        ProcessInfo.processInfo.environment["FOLIO_HOSTILE_FUZZ_SECONDS"].flatMap(Double.init) ?? 4
    }

    /// One seed of the table.
    @Test(arguments: seeds) func aSeedOfTheTable(_ seed: UInt64) async throws {
        try await Self.fuzz(seed: seed, seconds: Self.attackSeconds)
    }

    /// The seeds of `FOLIO_HOSTILE_FUZZ_SEED` (replays), then `FOLIO_HOSTILE_FUZZ_SEEDS` random ones; none by default.
    @Test func seedsOfTheEnvironment() async throws {
        let environment = ProcessInfo.processInfo.environment
        var seeds = (environment["FOLIO_HOSTILE_FUZZ_SEED"] ?? "").split(separator: ",").compactMap { text in
            let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased().replacingOccurrences(of: "_", with: "")
            return UInt64(trimmed.hasPrefix("0x") ? String(trimmed.dropFirst(2)) : trimmed, radix: 16)
        }
        var random = SystemRandomNumberGenerator()
        seeds += (0..<(environment["FOLIO_HOSTILE_FUZZ_SEEDS"].flatMap { Int($0) } ?? 0)).map { _ in random.next() }
        for seed in seeds {
            print("hostile fuzz: seed \(Self.hex(seed)) starts")
            try await Self.fuzz(seed: seed, seconds: Self.attackSeconds)
        }
    }

    /// The relay check is not vacuous: a `changes` message nobody vouches for, whose dependencies the listener has,
    /// fails it, and so does a head that does not check; a signed one passes.
    @Test func theRelayCheckCatchesWhatIsNotVouchedFor() throws {
        let document = DocumentID(UUIDBytes(bytes: Array(repeating: 0x36, count: 16)))
        let hand = HandDevice()
        let first = hand.change(seq: 1, of: document, lamport: 1)
        let second = hand.change(seq: 2, of: document, parents: [first], lamport: 2)
        var signed = try RelayCheck()
        signed.take(hand.changes([first], of: document))
        signed.take(hand.changes([second], of: document))
        try signed.finish()
        #expect(signed.violations.isEmpty, "\(signed.violations)")
        #expect(signed.relayedChanges == 2)
        var unsigned = try RelayCheck()
        unsigned.take(hand.changes([first], of: document))
        unsigned.take(
            SyncFrame.encode(.changes(document: document, changes: [EncodedChange(second)], heads: []), on: 7))
        try unsigned.finish()
        #expect(unsigned.violations.count == 1, "\(unsigned.violations)")
        let good = SignedHead(signing: first, with: hand.key)
        var signature = good.signature
        signature[0] ^= 1
        let bad = SignedHead(
            document: document, change: good.change, hash: good.hash, publicKey: good.publicKey, signature: signature)
        var refused = try RelayCheck()
        refused.take(
            SyncFrame.encode(.changes(document: document, changes: [EncodedChange(first)], heads: [bad]), on: 7))
        try refused.finish()
        #expect(refused.violations.count == 2, "\(refused.violations)")
        // A change whose parent never came waits for it: not the server's fault.
        var early = try RelayCheck()
        early.take(hand.changes([second], of: document))
        try early.finish()
        #expect(early.violations.isEmpty, "\(early.violations)")
    }

    // MARK: One seed

    static func hex(_ seed: UInt64) -> String { "0x" + String(seed, radix: 16, uppercase: true) }

    /// Runs the attack of `seed` for `seconds` and checks the invariants, recording an issue naming the seed for each
    /// that fails.
    static func fuzz(seed: UInt64, seconds: Double) async throws {
        let started = ContinuousClock.now
        let name = hex(seed)
        func fail(_ what: String) { Issue.record("seed \(name): \(what)") }
        let fixture = try await ServerFixture.start(arguments: serverArguments)
        let token = try await fixture.token(for: "notes")
        let url = fixture.server.libraryURL("notes")
        let endpoint = try ServerEndpoint(url: url, token: token)
        let phone = try fixture.library("Phone")
        let laptop = try fixture.library("Laptop")
        let honestIDs = [phone.store.localDevice.id, laptop.store.localDevice.id]

        let listener = FuzzListener(url, token: token)
        let listening = Task { await listener.run() }
        try await eventually(within: .seconds(90), "the listener's session") { listener.frames.count >= 1 }

        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        let honest = Task {
            var devices = HonestDevices(phone: phone, laptop: laptop, endpoint: endpoint, seed: seed)
            await devices.run(until: deadline)
            return devices
        }
        let attack = await withTaskGroup(of: AttackStatistics.self) { group in
            for slot in 0..<slots {
                group.addTask {
                    var grammar = FuzzGrammar(
                        seed: seed, slot: slot, slots: slots, honest: honestIDs, bodyBudget: (16 << 20) / slots)
                    var statistics = AttackStatistics()
                    let client = RawClient(url, token: token)
                    while ContinuousClock.now < deadline {
                        let connection = grammar.connection()
                        statistics.count(connection)
                        let number = statistics.connections
                        fuzzTrace("slot \(slot) connection \(number): \(connection.kinds) \(connection.ending)")
                        // Every connection ends within the server's stall timeout and close grace (12 s) and the
                        // client's close timeout (15 s). The bound leaves room for a loaded machine at the suite's
                        // start, when every server test starts its server at once: a hang has no end.
                        let ended: String? = await firstOf(.seconds(60)) {
                            switch connection.ending {
                            case .read(let linger):
                                let outcome = try? await client.run(connection.messages, linger: linger)
                                return outcome?.closeCode.map { "\($0)" } ?? "none"
                            case .stall(let duration):
                                try? await client.stall(after: connection.messages, for: duration)
                                return "stalled"
                            }
                        }
                        fuzzTrace("slot \(slot) connection \(number) ended: \(ended ?? "hung")")
                        statistics.closes[ended ?? "hung", default: 0] += 1
                        if ended == nil { statistics.hung.append(connection.kinds.joined(separator: " ")) }
                    }
                    return statistics
                }
            }
            return await group.reduce(into: AttackStatistics()) { $0.add($1) }
        }
        let devices = await honest.value
        let attackEnded = ContinuousClock.now
        fuzzTrace("seed \(name): the attack ended")
        for frames in attack.hung { fail("a hostile connection did not end within 60 s; it sent \(frames)") }

        // 1. The server is alive, within its memory bound.
        let pid = fixture.server.processIdentifier
        guard Self.isAlive(pid) else {
            fail("the server's process ended during the attack")
            listener.stop()
            await listening.value
            return
        }

        // 2. After a final sync of both, the honest devices converge.
        var failed: Set<String> = []
        for round in 0..<2 {
            for (library, label) in [(phone, "phone"), (laptop, "laptop")] where !failed.contains(label) {
                if let problem = await devices.syncUntilComplete(library) {
                    fail("the \(label) did not complete its sync \(round + 1) after the attack: \(problem)")
                    failed.insert(label)
                }
            }
        }
        fuzzTrace("seed \(name): final syncs done")
        // Devices that did not complete their syncs need not agree: that failure is recorded already.
        if failed.isEmpty {
            for problem in await devices.convergenceProblems() { fail(problem) }
        }
        // The pushes of the final syncs reach the listener.
        try await Task.sleep(for: .milliseconds(500))
        listener.stop()
        await listening.value

        let peak = try HostileMemberTests.peakResidentBytes(of: pid)
        if peak >= memoryBound {
            fail("the server's peak memory is \(peak >> 20) MiB, over its bound of \(memoryBound >> 20) MiB")
        }
        if !Self.isAlive(pid) { fail("the server's process ended after the attack") }

        // 3. Nothing unvouched was relayed.
        var relays = try RelayCheck()
        for frame in listener.frames { relays.take(frame) }
        try relays.finish()
        for violation in relays.violations.prefix(10) {
            fail("the listener (connected \(listener.connections) times) received \(violation)")
        }
        if relays.violations.count > 10 { fail("and \(relays.violations.count - 10) more relay violations") }

        // 4. /health answers.
        let health = try? await fixture.get("/health")
        if health?.status != 200 || health?.body.trimmingCharacters(in: .whitespacesAndNewlines) != "ok" {
            fail("/health answered \(health.map { "\($0.status) \($0.body)" } ?? "nothing")")
        }

        let kinds = attack.kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let closes = attack.closes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print(
            """
            hostile fuzz: seed \(name): \(attack.connections) hostile connections in \
            \(attackEnded - started) (frames: \(kinds); closes: \(closes)); honest: \(devices.summary); listener: \
            \(relays.relayedChanges) changes in \(relays.relayedMessages) messages over \(listener.connections) \
            connections; server peak \(peak >> 20) MiB; \(ContinuousClock.now - started) in all
            """)
    }

    /// Whether process `pid` runs (neither ended nor a zombie).
    static func isAlive(_ pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let state = status.split(separator: "\n").first(where: { $0.hasPrefix("State:") })
        else { return false }
        return !state.contains("Z") && !state.contains("X")
    }
}

/// What the hostile clients of a seed sent, and how their connections ended.
struct AttackStatistics: Sendable {
    var connections = 0
    var kinds: [String: Int] = [:]
    var closes: [String: Int] = [:]
    /// The frames of connections that did not end in time.
    var hung: [String] = []

    mutating func count(_ connection: FuzzConnection) {
        connections += 1
        for kind in connection.kinds { kinds[kind, default: 0] += 1 }
    }

    mutating func add(_ other: AttackStatistics) {
        connections += other.connections
        kinds.merge(other.kinds, uniquingKeysWith: +)
        closes.merge(other.closes, uniquingKeysWith: +)
        hung += other.hung
    }
}

/// Invariant 3: the `changes` messages a device received from the server, ingested in order into a fresh store,
/// bring nothing that no head vouches for.
struct RelayCheck {
    let store: ChangeLogStore
    private var documents: Set<DocumentID> = []
    private(set) var relayedMessages = 0
    private(set) var relayedChanges = 0
    private(set) var violations: [String] = []

    init() throws {
        store = try ChangeLogStore(inMemoryNamed: "listener-\(UUID())", key: DeviceKey(), deviceName: "listener")
    }

    /// Takes one frame the server sent.
    mutating func take(_ bytes: [UInt8]) {
        let frame: SyncFrame
        do { frame = try SyncFrame(decoding: bytes) } catch {
            violations.append("a frame that does not decode: \(error)")
            return
        }
        guard case .message(_, let inner) = frame else { return }
        let message: SyncMessage
        do { message = try SyncMessage(decoding: inner) } catch {
            violations.append("a message that does not decode: \(error)")
            return
        }
        guard case .changes(let document, let changes, let heads) = message else { return }
        relayedMessages += 1
        relayedChanges += changes.count
        documents.insert(document)
        do {
            let result = try store.ingest(encoded: changes, heads: heads)
            for refused in result.refusedHeads {
                violations.append("a head that does not check, of \(refused.head): \(refused.reason)")
            }
            for rejected in result.rejected {
                violations.append("a change its log cannot take, \(rejected.id) of \(document): \(rejected.reason)")
            }
        } catch {
            violations.append("changes of \(document) that its log refuses: \(error)")
        }
    }

    /// Once every frame is taken: a change that waits though every change it depends on is in the log waits for a
    /// head, so it was relayed without one.
    mutating func finish() throws {
        for document in documents.sorted(by: { $0.uuid < $1.uuid }) {
            let log = try store.vector(of: document)
            for change in try store.pendingChanges(of: document) {
                let ready = change.vector.entries.allSatisfy { entry in
                    entry.device == change.id.device
                        ? log[entry.device] + 1 >= entry.seq : log[entry.device] >= entry.seq
                }
                if ready { violations.append("\(change.id) of \(document), which no head reaches") }
            }
        }
    }
}
