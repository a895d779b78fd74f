import FolioCore
import FolioModels
import FolioSync
import Foundation
import Logging
import NIOCore
import Synchronization
import WSClient

/// The load generator of `serve-load`, in a process of its own (`FolioBench serve-load-generator PLAN`): as light as
/// a client can be, so that the server, not the clients, is what is measured.
///
/// Every device's changes are built and signed before the clock starts, each already encoded as the protocol frame
/// that carries it (one change and the signed head that vouches for it); each device writes to a document of its own,
/// its first change creating it. A device is a raw WebSocket connection that says hello and then only writes those
/// frames, at the plan's rate, and reads what the server pushes: for the notices of its library's documents (one a
/// document and batch the server stored) it records, for each change of another device the notice covers for the
/// first time, the delay since that change's frame was written. Nothing is decoded beyond the frame's kind and a
/// notice's vector.
///
/// It prints `ready` once every device is connected, `window-start` and `window-end` as the measured window opens and
/// closes (the benchmark reads the server's counters then), and last one JSON object: ``LoadReport``.
enum LoadGenerator {
    /// What the benchmark asks of the generator.
    struct Plan: Codable {
        /// Per device, the library's address (on the server process it connects to) and the library's token;
        /// devices `4k…4k+3` (of `librarySize`) share library `k`.
        var devices: [PlanDevice]
        var librarySize: Int
        /// Changes per second per device.
        var rate: Double
        var warmup: Double
        var window: Double
        var seed: UInt64
    }

    struct PlanDevice: Codable {
        var url: String
        var token: String
    }

    /// What the generator measured.
    struct LoadReport: Codable {
        var connections: Int
        /// Changes whose frame was written, in all and within the window.
        var sent: Int
        var sentInWindow: Int
        /// Changes of other devices that devices heard of (by notice) within the window: the pushes.
        var pushedInWindow: Int
        /// Changes the server acknowledged to their writer (its notice) within the window: stored.
        var acknowledgedInWindow: Int
        /// The window's length, as the generator timed it.
        var windowSeconds: Double
        var propagationP50: Double
        var propagationP99: Double
        var samples: Int
        /// Changes written that some device of their library had not heard of 10 s after the last was written.
        var unseen: Int
        /// Connections the server closed before the end, by close code.
        var closes: [String: Int]
        var cpuSeconds: Double
        var cpuSecondsInWindow: Double
        var peakRSSMiB: Double
        var buildSeconds: Double
    }

    static func main() async throws {
        guard CommandLine.arguments.count >= 3 else {
            throw BenchServerError(message: "usage: FolioBench serve-load-generator PLAN")
        }
        let plan = try JSONDecoder().decode(
            Plan.self, from: try Data(contentsOf: URL(fileURLWithPath: CommandLine.arguments[2])))
        let report = try await run(plan)
        let json = try JSONEncoder().encode(report)
        announce(String(decoding: json, as: UTF8.self))
    }

    static func run(_ plan: Plan) async throws -> LoadReport {
        let built = ContinuousClock.now
        let perDevice = Int((plan.rate * (plan.warmup + plan.window + 1)).rounded(.up)) + 1
        let devices = LoadDevices(plan: plan, changesPerDevice: perDevice)
        let buildSeconds = (ContinuousClock.now - built).seconds

        // Connect in groups, within the server's bound on connections waiting for their upgrade.
        let connections = (0..<plan.devices.count).map { LoadConnection(index: $0, devices: devices) }
        var tasks: [Task<Void, Never>] = []
        for start in stride(from: 0, to: connections.count, by: 100) {
            for connection in connections[start..<min(start + 100, connections.count)] {
                let device = plan.devices[connection.index]
                tasks.append(Task { await connection.run(url: device.url, token: device.token) })
            }
            let deadline = ContinuousClock.now + .seconds(60)
            while connections[start..<min(start + 100, connections.count)].contains(where: { !$0.isReady })
                && ContinuousClock.now < deadline
            {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        let ready = connections.filter(\.isReady).count
        guard ready == connections.count else {
            throw BenchServerError(message: "serve-load-generator: \(ready) of \(connections.count) devices connected")
        }
        announce("ready")

        // Writes: each device's frames at the rate, its first at a staggered offset; one task paces every device.
        let start = DispatchTime.now().uptimeNanoseconds + 100_000_000
        let interval = 1e9 / plan.rate
        let windowStart = start + UInt64(plan.warmup * 1e9)
        let windowEnd = windowStart + UInt64(plan.window * 1e9)
        devices.window.withLock { $0 = (windowStart, windowEnd) }
        let offsets = (0..<connections.count).map { UInt64(Double($0) / Double(connections.count) * interval) }
        var next = Array(repeating: 0, count: connections.count)
        var cpuAtStart: Double?
        var cpuAtEnd: Double?
        var announcedStart = false
        var announcedEnd = false
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            if !announcedStart && now >= windowStart {
                announcedStart = true
                cpuAtStart = ownCPU()
                announce("window-start")
            }
            if !announcedEnd && now >= windowEnd {
                announcedEnd = true
                cpuAtEnd = ownCPU()
                announce("window-end")
                break
            }
            for (index, connection) in connections.enumerated() where next[index] < perDevice {
                let begin = start + offsets[index]
                guard now >= begin else { continue }
                let due = min(Int(Double(now - begin) / interval) + 1, perDevice)
                while next[index] < due {
                    await connection.send(next[index])
                    next[index] += 1
                }
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        // Everything written reaches every other device of its library, or is counted as unseen 10 s later.
        let settled = ContinuousClock.now + .seconds(10)
        while devices.unseen(sent: next) > 0 && ContinuousClock.now < settled {
            try await Task.sleep(for: .milliseconds(50))
        }
        let unseen = devices.unseen(sent: next)
        for connection in connections { connection.stop() }
        for task in tasks { await task.value }
        let latencies = devices.latencies()
        let sentInWindow = devices.sentInWindow.load(ordering: .relaxed)
        var closes: [String: Int] = [:]
        for connection in connections { if let code = connection.closedEarly { closes[code, default: 0] += 1 } }
        return LoadReport(
            connections: connections.count, sent: next.reduce(0, +), sentInWindow: sentInWindow,
            pushedInWindow: devices.pushedInWindow.load(ordering: .relaxed),
            acknowledgedInWindow: devices.acknowledgedInWindow.load(ordering: .relaxed),
            windowSeconds: Double(windowEnd - windowStart) / 1e9,
            propagationP50: quantile(latencies, 0.5), propagationP99: quantile(latencies, 0.99),
            samples: latencies.count, unseen: unseen, closes: closes, cpuSeconds: ownCPU(),
            cpuSecondsInWindow: (cpuAtEnd ?? 0) - (cpuAtStart ?? 0), peakRSSMiB: peakMemoryMiB(),
            buildSeconds: buildSeconds)
    }

    /// Prints `line` at once: the benchmark reads the servers' counters when it arrives.
    static func announce(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func ownCPU() -> Double {
        let times = ProcStats.cpu(getpid())
        return times.user + times.system
    }
}

/// Every device's identity, prebuilt frames and send times, and what each device heard of the others.
final class LoadDevices: Sendable {
    let librarySize: Int
    let ids: [DeviceID]
    let documents: [DocumentID]
    /// Which device writes each document.
    let writer: [DocumentID: Int]
    /// The hello and the frames of each device, the nth carrying its change n + 1.
    let hellos: [[UInt8]]
    let frames: [[[UInt8]]]
    /// When each device's frames were written (uptime nanoseconds), 0 until then.
    let sentAt: [Guarded<[UInt64]>]
    /// Per device, per device of its library (by position in the library), the highest sequence number heard of.
    let heardOf: [Guarded<[UInt64]>]
    let window = Mutex<(start: UInt64, end: UInt64)>((.max, .max))
    let samples = Mutex<[Double]>([])
    let sentInWindow = Atomic<Int>(0)
    let pushedInWindow = Atomic<Int>(0)
    let acknowledgedInWindow = Atomic<Int>(0)
    /// Per device, the highest of its own sequence numbers the server acknowledged.
    let acknowledged: [Guarded<UInt64>]

    init(plan: LoadGenerator.Plan, changesPerDevice: Int) {
        librarySize = plan.librarySize
        let count = plan.devices.count
        let keys = (0..<count).map { DeviceKey(using: SeededIdentifierSource(seed: plan.seed &+ UInt64($0) &* 7919)) }
        ids = keys.map(\.id)
        let documentSource = SeededIdentifierSource(seed: plan.seed ^ 0xD0C5)
        documents = (0..<count).map { _ in DocumentID(using: documentSource) }
        writer = Dictionary(uniqueKeysWithValues: documents.enumerated().map { ($1, $0) })
        let channel: UInt64 = 1
        hellos = keys.map { key in
            SyncFrame.encode(
                .hello(SyncHello(device: key.device(named: "load"), session: channel, vectors: [:])), on: channel)
        }
        // Built on every core: signing is most of it.
        let built = Mutex([[[UInt8]]](repeating: [], count: count))
        let documents = self.documents
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let key = keys[index]
            let document = documents[index]
            var frames: [[UInt8]] = []
            frames.reserveCapacity(changesPerDevice)
            var previous: Change?
            for seq in 1...UInt64(changesPerDevice) {
                var vector = VersionVector()
                vector[key.id] = seq
                let kind: ChangeKind =
                    previous == nil
                    ? .lifecycle(.create(name: "load \(index)", type: "public.plain-text", container: .shared))
                    : .edit(Edit(operations: TextDocument.Operation.encodeGroup([.append("x")])))
                let change = Change(
                    document: document, id: ChangeID(device: key.id, seq: seq),
                    parents: previous.map { [$0.hash] } ?? [], vector: vector, lamport: seq,
                    wallTime: Timestamp(millisecondsSince1970: 1_700_000_000_000 + Int64(seq) * 50), kind: kind)
                frames.append(
                    SyncFrame.encode(
                        .changes(
                            document: document, changes: [EncodedChange(change)],
                            heads: [SignedHead(signing: change, with: key)]), on: channel))
                previous = change
            }
            built.withLock { $0[index] = frames }
        }
        frames = built.withLock { $0 }
        sentAt = (0..<count).map { _ in Guarded(Array(repeating: 0, count: changesPerDevice)) }
        heardOf = (0..<count).map { _ in Guarded(Array(repeating: 0, count: plan.librarySize)) }
        acknowledged = (0..<count).map { _ in Guarded(0) }
    }

    /// Records that `device` wrote the frame of its change `index + 1`.
    func sent(_ device: Int, _ index: Int) {
        let now = DispatchTime.now().uptimeNanoseconds
        sentAt[device].value.withLock { $0[index] = now }
        let window = self.window.withLock { $0 }
        if now >= window.start && now < window.end { sentInWindow.add(1, ordering: .relaxed) }
    }

    /// `device` heard that the server holds `vector` of `document`.
    func heard(_ device: Int, notice document: DocumentID, vector: VersionVector) {
        guard let writer = writer[document], writer / librarySize == device / librarySize else { return }
        guard writer != device else {
            // The acknowledgement of this device's own changes: stored.
            let seq = vector[ids[device]]
            let before = acknowledged[device].value.withLock { acknowledged in
                defer { acknowledged = max(acknowledged, seq) }
                return acknowledged
            }
            let now = DispatchTime.now().uptimeNanoseconds
            let window = self.window.withLock { $0 }
            if seq > before && now >= window.start && now < window.end {
                acknowledgedInWindow.add(Int(seq - before), ordering: .relaxed)
            }
            return
        }
        let seq = vector[ids[writer]]
        let position = writer % librarySize
        let before = heardOf[device].value.withLock { heard in
            let before = heard[position]
            if seq > before { heard[position] = seq }
            return before
        }
        guard seq > before else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        let window = self.window.withLock { $0 }
        let times = sentAt[writer].value.withLock { Array($0[Int(before)..<min(Int(seq), $0.count)]) }
        var delays: [Double] = []
        for sent in times where sent >= window.start && sent < window.end && sent > 0 {
            delays.append(Double(now &- sent) / 1e6)
        }
        if now >= window.start && now < window.end { pushedInWindow.add(Int(seq - before), ordering: .relaxed) }
        if !delays.isEmpty { samples.withLock { $0 += delays } }
    }

    /// Changes written (`sent[d]` of device d) that another device of the library has not heard of.
    func unseen(sent: [Int]) -> Int {
        var missing = 0
        for device in ids.indices {
            let heard = heardOf[device].value.withLock { $0 }
            let library = device / librarySize
            for position in 0..<librarySize {
                let writer = library * librarySize + position
                guard writer != device, writer < ids.count else { continue }
                missing += max(sent[writer] - Int(heard[position]), 0)
            }
        }
        return missing
    }

    func latencies() -> [Double] { samples.withLock { $0 } }
}

/// One device's raw WebSocket connection: a hello, then the frames it is given, and every frame pushed read.
final class LoadConnection: Sendable {
    let index: Int
    private let devices: LoadDevices
    private struct State {
        var outbound: WebSocketOutboundWriter?
        var stopped = false
        var closedEarly: String?
    }

    private let state = Mutex(State())

    init(index: Int, devices: LoadDevices) {
        self.index = index
        self.devices = devices
    }

    var isReady: Bool { state.withLock { $0.outbound != nil } }
    var closedEarly: String? { state.withLock { $0.closedEarly } }

    func stop() { state.withLock { $0.stopped = true } }

    /// Writes the frame of change `frame + 1`.
    func send(_ frame: Int) async {
        guard let outbound = state.withLock({ $0.outbound }) else { return }
        devices.sent(index, frame)
        try? await outbound.write(.binary(ByteBuffer(bytes: devices.frames[index][frame])))
    }

    func run(url: String, token: String) async {
        var configuration = WebSocketClientConfiguration(
            maxFrameSize: SyncFrame.maximumBytes, additionalHeaders: [.authorization: "Bearer \(token)"])
        configuration.autoPing = .disabled
        let devices = self.devices
        let index = self.index
        let client = WebSocketClient(
            url: url + "/sync", configuration: configuration, logger: Logger(label: "serve-load")
        ) { inbound, outbound, _ in
            try await outbound.write(.binary(ByteBuffer(bytes: devices.hellos[index])))
            self.state.withLock { $0.outbound = outbound }
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        for try await message in inbound.messages(maxSize: SyncFrame.maximumBytes) {
                            guard case .binary(let buffer) = message,
                                case .notice(let document, let vector)? = try? SyncFrame(
                                    decoding: buffer.readableBytesView)
                            else { continue }
                            devices.heard(index, notice: document, vector: vector)
                        }
                    } catch {}
                }
                group.addTask {
                    while !self.state.withLock({ $0.stopped }) { try? await Task.sleep(for: .milliseconds(50)) }
                }
                await group.next()
                group.cancelAll()
            }
        }
        do {
            let close = try await client.run()
            if !state.withLock({ $0.stopped }) {
                state.withLock { $0.closedEarly = close.map { "\($0.closeCode)" } ?? "no close frame" }
            }
        } catch {
            state.withLock { $0.closedEarly = "\(error)" }
        }
    }
}

/// A value behind a lock of its own, for arrays of them (a `Mutex` cannot be copied into one).
final class Guarded<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
