import FolioCore
import FolioModels
import FolioSimulator
import FolioTesting

/// Random valid scenarios from a seed, with texts and names chosen to trouble a YAML writer: words YAML reads as
/// other types, indicators, quotes, escapes, line breaks, control characters, combining marks and emoji.
struct AwkwardScenarioGenerator {
    var random: SplitMix64

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    static let awkward = [
        "", " ", "a b", "a  b", " lead", "trail ", "yes", "No", "null", "~", "true", "False", "on", "y", "1", "007",
        "-1", "0x1F", "1e3", "1.5", ".inf", ".NaN", "-", "- a", "a: b", "a:b", "#c", "a #c", "[x]", "{y}", "a, b",
        "&a", "*a", "!t", "!!str", "%p", "@q", "`r", "|", ">", "?", "'s'", "\"d\"", "it's", "back\\slash", "tab\there",
        "line\nbreak", "two\n\nbreaks", "cr\r", "\r\n", "nul\0", "\u{1}", "\u{7F}", "\u{85}", "\u{A0}", "\u{2028}",
        "\u{FEFF}", "\u{FFFE}", "é", "e\u{301}", "\u{301}", "👍🏽", "🇫🇷", "日本", "\u{FFFD}", "\u{10FFFF}", "-90s", "30s",
        "all", "latest", "<<", "---", "...", "Notes", "cover.png", "r1", "name",
    ]

    mutating func int(_ range: ClosedRange<Int>) -> Int { random.int(in: range) }
    mutating func chance(_ numerator: Int, in denominator: Int) -> Bool { random.chance(numerator, in: denominator) }
    mutating func pick<T>(_ choices: [T]) -> T { random.pick(choices) }

    /// A text made of awkward pieces.
    mutating func text() -> String {
        (0..<int(0...3)).map { _ in pick(Self.awkward) }.joined()
    }

    /// A non-empty name. It never starts with U+FEFF: Yams takes a key that does for the same key without it (a
    /// byte order mark), so two names differing only by one would collide as keys of one map.
    mutating func name() -> String {
        let name = text()
        if name.isEmpty { return "n\(int(0...99))" }
        return name.unicodeScalars.first == "\u{FEFF}" ? "n" + name : name
    }

    /// A name that can name an image.
    mutating func imageName() -> String {
        let candidate = name() + pick([".png", ".jpg", ""])
        return PagesDocument.isValidImageName(candidate) ? candidate : "img\(int(0...9)).png"
    }

    mutating func fields() -> [String: String] {
        var fields: [String: String] = [:]
        for _ in 0..<int(0...3) { fields[name()] = text() }
        return fields
    }

    mutating func duration(_ range: ClosedRange<Int64>) -> SimulatedDuration {
        let unit: Int64 = pick([1, 1000, 60_000, 3_600_000])
        let lower = range.lowerBound / unit
        let upper = range.upperBound / unit
        return SimulatedDuration(milliseconds: Int64.random(in: lower...upper, using: &random) * unit)
    }

    mutating func probability() -> Double {
        chance(1, in: 2) ? pick([0, 1, 0.1, 0.05, 1e-5, 0.2]) : Double.random(in: 0...1, using: &random)
    }

    /// A scenario that ``ScenarioParser`` accepts.
    mutating func scenario() -> Scenario {
        var devices: [Scenario.Device] = []
        for _ in 0..<int(1...4) {
            let name = name()
            guard !devices.contains(where: { $0.name == name }), !Scenario.Choice.strategyWords.contains(name) else {
                continue
            }
            devices.append(.init(name: name, clockSkew: chance(1, in: 3) ? duration(-7_200_000...7_200_000) : .zero))
        }
        if devices.isEmpty { devices = [.init(name: "iPad")] }
        let model = pick(Scenario.Model.allCases)
        var network = Scenario.Network.perfect
        if chance(1, in: 2) {
            network = .init(
                latency: duration(0...60_000), loss: probability(), duplicate: probability(),
                reorder: probability())
        }
        var steps = StepGenerator(devices: devices.map(\.name), defaultModel: model)
        for _ in 0..<int(1...40) {
            steps.add(using: &self)
        }
        return Scenario(
            name: name(), description: chance(1, in: 2) ? text() : nil, seed: random.next(), model: model,
            strategy: pick(Scenario.Strategy.allCases), devices: devices, network: network,
            steps: steps.steps.map { Scenario.Step($0) })
    }
}

/// Valid steps: documents are created before use and edited with their own model's operations; a device acts
/// only while it runs (a crash stops it until a restart, and one device always runs).
struct StepGenerator {
    let devices: [String]
    let defaultModel: Scenario.Model
    var documents: [(name: String, model: Scenario.Model)] = []
    var steps: [Scenario.Action] = []
    /// The devices a crash stopped and no restart brought back yet.
    var down: Set<String> = []

    var running: [String] { devices.filter { !down.contains($0) } }

    init(devices: [String], defaultModel: Scenario.Model) {
        self.devices = devices
        self.defaultModel = defaultModel
    }

    mutating func add(using generator: inout AwkwardScenarioGenerator) {
        let device = generator.pick(running)
        guard let document = documents.isEmpty || generator.chance(1, in: 8) ? nil : generator.pick(documents) else {
            create(device: device, using: &generator)
            return
        }
        switch generator.int(0...17) {
        case 0...4:
            steps.append(
                .edit(
                    device: device, document: document.name,
                    operation: operation(for: document.model, using: &generator)))
        case 5:
            let name = document.name
            steps.append(
                generator.pick([
                    .undo(device: device, document: name), .redo(device: device, document: name),
                    .save(device: device, document: name), .close(device: device, document: name),
                    .open(device: device, document: name), .delete(device: device, document: name),
                ]))
        case 6:
            let newName = generator.name()
            if let known = documents.first(where: { $0.name == newName }), known.model != document.model { return }
            steps.append(.rename(device: device, document: document.name, to: newName))
            documents.append((newName, document.model))
        case 7:
            steps.append(.sync(generator.chance(1, in: 2) ? .all : .devices(subset(using: &generator))))
        case 8:
            steps.append(
                generator.chance(1, in: 2) ? .offline(subset(using: &generator)) : .online(subset(using: &generator)))
        case 9:
            guard devices.count > 1 else { return }
            var shuffled = devices.shuffled(using: &generator.random)
            let first = Array(shuffled.prefix(generator.int(1...(devices.count - 1))))
            shuffled.removeFirst(first.count)
            let second = Array(shuffled.prefix(generator.int(0...shuffled.count)))
            steps.append(.partition(second.isEmpty ? [first] : [first, second]))
        case 10:
            steps.append(.heal)
        case 11:
            steps.append(.wait(generator.duration(0...7_200_000)))
        case 12:
            guard running.count > 1 else { return }
            down.insert(device)
            steps.append(.crash(device: device, during: generator.pick([nil, .save, .append])))
        case 13:
            guard !down.isEmpty else { return }
            let back = generator.pick(down.sorted())
            down.remove(back)
            steps.append(.restart(device: back))
        case 14:
            let choice: Scenario.Choice = generator.pick([.device(generator.pick(devices)), .latest, .merge, .keepBoth])
            steps.append(.resolve(device: device, document: document.name, choose: choice))
        default:
            steps.append(.expect(expectation(document, using: &generator)))
        }
    }

    private mutating func create(device: String, using generator: inout AwkwardScenarioGenerator) {
        let model = generator.pick(Scenario.Model.allCases)
        let name = generator.name()
        if let known = documents.first(where: { $0.name == name }), known.model != model { return }
        var contents: Scenario.Contents?
        if generator.chance(1, in: 2) {
            switch model {
            case .text:
                contents = .text(generator.text())
            case .records:
                var records: [RecordsDocument.Record] = []
                for _ in 0..<generator.int(0...3) {
                    let id = generator.name()
                    if !records.contains(where: { $0.id == id }) {
                        records.append(.init(id: id, fields: generator.fields()))
                    }
                }
                contents = .records(records)
            case .pages:
                var images: [String: Int] = [:]
                for _ in 0..<generator.int(0...3) { images[generator.imageName()] = generator.int(0...4096) }
                contents = .pages(text: generator.text(), images: images)
            }
        }
        steps.append(.create(device: device, document: name, model: model, contents: contents))
        documents.append((name, model))
    }

    private func subset(using generator: inout AwkwardScenarioGenerator) -> [String] {
        let shuffled = devices.shuffled(using: &generator.random)
        return Array(shuffled.prefix(generator.int(1...devices.count)))
    }

    private func operation(for model: Scenario.Model, using generator: inout AwkwardScenarioGenerator)
        -> Scenario.Operation
    {
        switch model {
        case .text:
            generator.pick([
                .insert(at: generator.int(0...50), text: generator.text()),
                .delete(at: generator.int(0...50), count: generator.int(0...9)),
                .append(generator.text()),
                .replace(generator.text()),
            ])
        case .records:
            generator.pick([
                .add(record: generator.name(), fields: generator.fields()),
                .set(record: generator.name(), field: generator.name(), value: generator.text()),
                .remove(record: generator.name()),
            ])
        case .pages:
            generator.pick([
                .insert(at: generator.int(0...50), text: generator.text()),
                .delete(at: generator.int(0...50), count: generator.int(0...9)),
                .setText(generator.text()),
                .putImage(name: generator.imageName(), bytes: generator.int(0...100_000)),
                .removeImage(name: generator.imageName()),
            ])
        }
    }

    private func expectation(
        _ document: (name: String, model: Scenario.Model), using generator: inout AwkwardScenarioGenerator
    )
        -> Scenario.Expectation
    {
        var expectation = Scenario.Expectation()
        if generator.chance(1, in: 4) {
            expectation.converged = generator.chance(1, in: 2)
            if generator.chance(1, in: 2) { expectation.lostChanges = generator.int(0...5) }
            if generator.chance(1, in: 2) { return expectation }
        }
        expectation.document = document.name
        // While a device is down, the document is checked on one that runs, not on every device.
        if generator.chance(1, in: 2) || !down.isEmpty { expectation.device = generator.pick(running) }
        if generator.chance(1, in: 6) {
            expectation.exists = false
            return expectation
        }
        if generator.chance(1, in: 2) { expectation.state = generator.pick(Scenario.ExpectedState.allCases) }
        if generator.chance(1, in: 3) { expectation.conflictVersions = generator.int(0...4) }
        if generator.chance(1, in: 3) { expectation.exists = true }
        switch document.model {
        case .text:
            if generator.chance(1, in: 2) { expectation.text = generator.text() }
            if generator.chance(1, in: 2) { expectation.contains = generator.text() }
        case .records:
            if generator.chance(1, in: 2) {
                var records: [String: [String: String]] = [:]
                for _ in 0..<generator.int(0...3) { records[generator.name()] = generator.fields() }
                expectation.records = records
            }
        case .pages:
            if generator.chance(1, in: 2) {
                expectation.images = Set((0..<generator.int(0...3)).map { _ in generator.imageName() })
            }
        }
        if expectation.state == nil, expectation.conflictVersions == nil, expectation.exists == nil,
            expectation.text == nil, expectation.contains == nil, expectation.records == nil, expectation.images == nil
        {
            expectation.state = .normal
        }
        return expectation
    }
}
