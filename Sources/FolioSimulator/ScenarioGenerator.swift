import FolioCore
import FolioModels

/// Makes random, valid scenarios for fuzzing: devices with skewed clocks, documents of every model, edits, syncs
/// over faulty networks, offline devices, partitions, crashes and restarts, resolutions, files written by another
/// program and imported files.
///
/// The same seed always gives the same scenario, and every scenario it makes reads back from its YAML
/// (``Scenario/yaml``) unchanged. Steps are valid as written, but some may not apply when they run (a device edits
/// a document it has not received yet, deletes past the end of a text): run them with ``Simulator/StepErrors/skip``.
/// The scenarios hold no expectations: fuzzing checks invariants (``Simulator/checksFinalConvergence``).
public struct ScenarioGenerator: Sendable {
    /// How many devices a scenario has.
    public var devices: ClosedRange<Int>
    /// How many steps a scenario has.
    public var steps: Int

    /// Creates a generator.
    ///
    /// - Precondition: at least one device and one step.
    public init(devices: ClosedRange<Int> = 2...5, steps: Int = 50) {
        precondition(devices.lowerBound >= 1 && steps >= 1, "a scenario has at least one device and one step")
        self.devices = devices
        self.steps = steps
    }

    /// The scenario of `seed`.
    public func scenario(seed: UInt64) -> Scenario {
        var (scenario, steps) = stream(seed: seed)
        scenario.steps = Array(steps)
        return scenario
    }

    /// The scenario of `seed` without its steps, and its steps as a sequence that makes each one when asked for:
    /// the steps of ``scenario(seed:)``, never all in memory at once (see ``Simulator/run(_:streaming:)``).
    public func stream(seed: UInt64) -> (scenario: Scenario, steps: GeneratedSteps) {
        var state = GenerationState(seed: seed)
        let scenario = state.makeSetting(deviceCount: devices)
        return (scenario, GeneratedSteps(state: state, count: steps))
    }
}

/// The steps of a generated scenario, each made when asked for (``ScenarioGenerator/stream(seed:)``): the first
/// creates a document, and each later one depends on those before it (the devices down, the documents made), so
/// they come in order, once.
public struct GeneratedSteps: Sequence, IteratorProtocol, Sendable {
    private var state: GenerationState
    private var made = 0
    /// How many steps the sequence makes.
    public let count: Int

    fileprivate init(state: GenerationState, count: Int) {
        self.state = state
        self.count = count
    }

    /// The steps still to come.
    public var underestimatedCount: Int { count - made }

    /// The next step; `nil` after the last.
    public mutating func next() -> Scenario.Step? {
        guard made < count else { return nil }
        made += 1
        return Scenario.Step(made == 1 ? state.createStep() : state.nextAction())
    }
}

/// What a generation knows as it goes: the devices that are down, the documents and their models.
private struct GenerationState: Sendable {
    var random: SplitMix64
    let seed: UInt64
    var names: [String] = []
    var down: Set<String> = []
    var offline: Set<String> = []
    var partitioned = false
    var documents: [(name: String, model: Scenario.Model)] = []

    static let deviceNames = ["iPad", "Mac", "iPhone", "Watch", "Vision", "TV", "Car", "Web"]
    static let words = ["milk", "eggs", "tea", "plan", "idea", "note", "todo", "done", "é", "日本", "🙂"]

    init(seed: UInt64) {
        self.seed = seed
        random = SplitMix64(seed: seed)
    }

    mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(max(bound, 1))) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    /// The scenario's devices, strategy and network, without steps.
    mutating func makeSetting(deviceCount: ClosedRange<Int>) -> Scenario {
        let count = deviceCount.lowerBound + below(deviceCount.count)
        names = Array(Self.deviceNames.prefix(count))
        names += (Self.deviceNames.count..<max(count, Self.deviceNames.count)).map { "Device\($0 + 1)" }
        let devices = names.map { name in
            Scenario.Device(
                name: name,
                clockSkew: chance(30) ? SimulatedDuration(milliseconds: Int64(below(600_001)) - 300_000) : .zero)
        }
        let strategy = pick(Scenario.Strategy.allCases)
        let network =
            chance(40)
            ? Scenario.Network.perfect
            : Scenario.Network(
                latency: SimulatedDuration(milliseconds: Int64(below(500))), loss: Double(below(4)) / 10,
                duplicate: Double(below(4)) / 10, reorder: Double(below(6)) / 10)
        return Scenario(
            name: "Random scenario \(seed)", seed: seed, model: .text, strategy: strategy, devices: devices,
            network: network, steps: [])
    }

    var up: [String] { names.filter { !down.contains($0) } }

    mutating func createStep() -> Scenario.Action {
        let model = pick(Scenario.Model.allCases)
        let name = "Doc\(documents.count + 1)"
        documents.append((name, model))
        return .create(device: pick(up), document: name, model: model, contents: chance(50) ? contents(of: model) : nil)
    }

    /// A new document made from a file written outside the library.
    mutating func importStep() -> Scenario.Action {
        let model = pick(Scenario.Model.allCases)
        let name = "Doc\(documents.count + 1)"
        documents.append((name, model))
        return .importFile(device: pick(up), document: name, model: model, contents: contents(of: model))
    }

    /// Small whole contents of `model`, as a create, an import or another program writes them.
    mutating func contents(of model: Scenario.Model) -> Scenario.Contents {
        switch model {
        case .text: .text("\(pick(Self.words))\n")
        case .records: .records([RecordsDocument.Record(id: "r\(1 + below(3))", fields: ["name": pick(Self.words)])])
        case .pages: .pages(text: pick(Self.words), images: [pick(["cover.png", "a.png"]): 16 + below(128)])
        }
    }

    mutating func nextAction() -> Scenario.Action {
        let device = pick(up)
        let document = pick(documents)
        switch below(100) {
        case 0..<38: return .edit(device: device, document: document.name, operation: operation(for: document.model))
        case 38..<55: return .sync(chance(70) ? .all : .devices(names.filter { _ in chance(60) }.ifEmpty([device])))
        case 55..<59:
            if chance(50), let back = offline.sorted().first {
                offline.remove(back)
                return .online([back])
            }
            offline.insert(device)
            return .offline([device])
        case 59..<62:
            if partitioned {
                partitioned = false
                return .heal
            }
            guard names.count > 1 else { return .wait(.seconds(1)) }
            partitioned = true
            let split = 1 + below(names.count - 1)
            return .partition([Array(names.prefix(split))])
        case 62..<66: return .wait(SimulatedDuration(milliseconds: Int64(below(8_000))))
        case 66..<67: return .writeFile(device: device, document: document.name, contents: contents(of: document.model))
        case 67..<72: return .save(device: device, document: document.name)
        case 72..<77:
            return chance(60)
                ? .undo(device: device, document: document.name) : .redo(device: device, document: document.name)
        case 77..<80:
            if let crashed = down.sorted().first {
                down.remove(crashed)
                return .restart(device: crashed)
            }
            guard up.count > 1 else { return .wait(.seconds(1)) }
            down.insert(device)
            let point: Scenario.CrashPoint? = pick([nil, .save, .append])
            return .crash(device: device, during: point)
        case 80..<82:
            // At times another document's name: namesakes must each keep a file of their own on every device.
            let base = chance(30) ? pick(documents).name : document.name
            return .rename(device: device, document: document.name, to: "\(base) v\(below(3))")
        case 82..<83: return .delete(device: device, document: document.name)
        case 83..<85: return documents.count < 4 ? createStep() : .sync(.all)
        case 85..<86: return documents.count < 4 ? importStep() : .sync(.all)
        case 91:
            return .markVersion(device: device, document: document.name, name: pick(Self.words))
        case 92:
            let version: Scenario.VersionReference =
                chance(50)
                ? .number(1 + below(4)) : .at(SimulatedDuration(milliseconds: Int64(below(120_000))))
            return .restore(device: device, document: document.name, version: version)
        case 86..<91:
            let choice: Scenario.Choice = chance(50) ? .device(pick(names)) : pick([.latest, .merge, .keepBoth])
            return .resolve(device: device, document: document.name, choose: choice)
        case 93..<96: return .close(device: device, document: document.name)
        case 96..<98: return .open(device: device, document: document.name)
        default: return .move(device: device, document: document.name, to: pick(Scenario.Container.allCases))
        }
    }

    mutating func operation(for model: Scenario.Model) -> Scenario.Operation {
        switch model {
        case .text:
            switch below(10) {
            case 0..<5: return .append("\(pick(Self.words))\n")
            case 5..<7: return .insert(at: below(3), text: pick(Self.words))
            case 7..<9: return .delete(at: below(3), count: 1 + below(3))
            default: return .replace("\(pick(Self.words))\n\(pick(Self.words))\n")
            }
        case .records:
            let record = "r\(1 + below(3))"
            switch below(10) {
            case 0..<6: return .set(record: record, field: pick(["name", "city", "phone"]), value: pick(Self.words))
            case 6..<9: return .add(record: record, fields: ["name": pick(Self.words)])
            default: return .remove(record: record)
            }
        case .pages:
            switch below(10) {
            case 0..<3: return .setText("\(pick(Self.words))\n\(pick(Self.words))\n")
            case 3: return .insert(at: below(3), text: pick(Self.words))
            case 4: return .delete(at: below(3), count: 1 + below(3))
            case 5..<8: return .putImage(name: pick(["cover.png", "a.png", "b.jpg"]), bytes: 16 + below(256))
            default: return .removeImage(name: pick(["cover.png", "a.png", "b.jpg"]))
            }
        }
    }
}

extension Array {
    fileprivate func ifEmpty(_ replacement: [Element]) -> [Element] { isEmpty ? replacement : self }
}
