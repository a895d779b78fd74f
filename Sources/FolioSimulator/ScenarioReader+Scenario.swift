import Yams

extension ScenarioReader {
    /// The keys of a scenario file's top level, in the order `docs/scenarios.md` lists them.
    static let topLevelKeys = ["name", "description", "seed", "model", "strategy", "devices", "network", "steps"]

    /// Reads a whole scenario from the file's root node (`nil` for a file without a document).
    ///
    /// The keys are read in a fixed order whatever their order in the file: the default model and the devices
    /// must be known before the steps that use them.
    mutating func readScenario(_ root: Node?) -> Scenario? {
        let nameExample = "name: Two devices edit a note offline"
        guard let root, !Self.isNull(root) else {
            report(
                .missingKey, at: nil,
                "the file holds no scenario; write at least name, devices and steps, such as "
                    + "{name: Offline edits, devices: [{name: iPad}], steps: [{sync: all}]}")
            return nil
        }
        guard case .mapping = root else {
            report(
                .wrongType, at: root,
                "a scenario file is a map with name, devices and steps at the top level, not \(Self.shape(of: root)); "
                    + "start with \(nameExample)")
            return nil
        }
        guard let top = readFields(root, "the scenario", allowed: Self.topLevelKeys, example: nameExample) else {
            return nil
        }
        let name = require(top, "name", example: nameExample).flatMap { readName($0, "name", example: nameExample) }
        let description = top["description"].flatMap {
            readText($0, "description", example: "description: Free text shown in reports.")
        }
        let seed = top["seed"].flatMap { readSeed($0) }
        if let node = top["model"], let model: Scenario.Model = readWord(node, "model") {
            defaultModel = model
        }
        let strategy: Scenario.Strategy? = top["strategy"].flatMap { readWord($0, "strategy") }
        let devicesExample = "devices: [{name: iPad}, {name: Mac, clockSkew: -90s}]"
        let devices = require(top, "devices", example: devicesExample).flatMap {
            readDevices($0, example: devicesExample)
        }
        let network = top["network"].flatMap { readNetwork($0) }
        let steps = require(top, "steps", example: "steps: [{sync: all}]").flatMap { readSteps($0) }
        return Scenario(
            name: name ?? "", description: description, seed: seed ?? Scenario.defaultSeed, model: defaultModel,
            strategy: strategy ?? .askUser, devices: devices ?? [], network: network ?? .perfect, steps: steps ?? [])
    }

    /// A seed: a whole number that fits in 64 bits without sign.
    mutating func readSeed(_ node: Node) -> UInt64? {
        guard let text = readText(node, "seed", example: "seed: 7") else { return nil }
        guard text.allSatisfy({ $0.isASCII && $0.isWholeNumber }), let seed = UInt64(text) else {
            report(
                .invalidValue, at: node,
                "seed must be a whole number from 0 to \(UInt64.max), not '\(text)'; write seed: 7")
            return nil
        }
        return seed
    }

    /// The devices: at least one, names unique. Sets ``deviceNames`` when every device has a readable name.
    mutating func readDevices(_ node: Node, example: String) -> [Scenario.Device]? {
        guard let items = readList(node, "devices", example: example) else { return nil }
        guard !items.isEmpty else {
            report(.invalidValue, at: node, "a scenario needs at least one device; write \(example)")
            return nil
        }
        var devices: [Scenario.Device] = []
        var lines: [String: Int] = [:]
        var everyNameRead = true
        for item in items {
            let itemExample = "- name: iPad"
            guard let fields = readFields(item, "a device", allowed: ["name", "clockSkew"], example: itemExample),
                let nameNode = require(fields, "name", example: itemExample),
                let name = readName(nameNode, "a device's name", example: itemExample)
            else {
                everyNameRead = false
                continue
            }
            let clockSkew = fields["clockSkew"].flatMap { readDuration($0, "clockSkew") }
            if let line = lines[name] {
                report(
                    .duplicateName, at: nameNode,
                    "device '\(name)' is already declared at line \(line); give each device its own name")
                continue
            }
            if Scenario.Choice.strategyWords.contains(name) {
                report(
                    .invalidValue, at: nameNode,
                    "a device cannot be named '\(name)': resolve's choose uses that word for a strategy; pick another name"
                )
            }
            lines[name] = nameNode.mark?.line ?? 0
            devices.append(Scenario.Device(name: name, clockSkew: clockSkew ?? .zero))
        }
        // A device whose name could not be read would make every step that names it look wrong: check no names then.
        deviceNames = everyNameRead ? devices.map(\.name) : nil
        return devices
    }

    /// The network: latency (not negative) and three probabilities; absent keys keep a perfect link's values.
    mutating func readNetwork(_ node: Node) -> Scenario.Network? {
        let example = "network: {latency: 200ms, loss: 0.1, duplicate: 0.05, reorder: 0.2}"
        guard
            let fields = readFields(
                node, "network", allowed: ["latency", "loss", "duplicate", "reorder"], example: example)
        else { return nil }
        var network = Scenario.Network.perfect
        if let latencyNode = fields["latency"], let latency = readDuration(latencyNode, "latency") {
            if latency < .zero {
                report(
                    .invalidValue, at: latencyNode,
                    "latency cannot be negative; write a duration such as latency: 200ms")
            }
            network.latency = latency
        }
        if let value = fields["loss"].flatMap({ readProbability($0, "loss") }) { network.loss = value }
        if let value = fields["duplicate"].flatMap({ readProbability($0, "duplicate") }) { network.duplicate = value }
        if let value = fields["reorder"].flatMap({ readProbability($0, "reorder") }) { network.reorder = value }
        return network
    }
}
