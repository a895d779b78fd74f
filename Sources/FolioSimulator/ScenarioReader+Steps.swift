import Yams

extension ScenarioReader {
    /// The keys inside each action's map, for the actions whose value is a map.
    static let actionFields: [String: [String]] = {
        let target = ["device", "document"]
        let operations = Scenario.Operation.allKeys
        return [
            "create": target + ["model", "text", "records", "pages", "in"],
            "edit": target + operations,
            "undo": target, "redo": target, "save": target, "close": target, "open": target, "delete": target,
            "rename": target + ["to"],
            "crash": ["device", "during"],
            "restart": ["device"],
            "resolve": target + ["choose"],
            "move": target + ["to"],
            "writeFile": target + ["text", "records", "pages"],
            "import": target + ["model", "text", "records", "pages"],
            "expect": Scenario.Expectation.keys,
            "restore": target + ["version", "at"],
            "markVersion": target + ["name"],
        ]
    }()

    /// How to write the action `key`, with this scenario's names where it has them.
    func actionExample(_ key: String) -> String {
        let device = exampleDevice
        let document = exampleDocument
        return switch key {
        case "create": "create: {device: \(device), document: \(document)}"
        case "edit": "edit: {device: \(device), document: \(document), append: \" more\"}"
        case "rename": "rename: {device: \(device), document: \(document), to: Groceries}"
        case "sync": "sync: all"
        case "offline", "online": "\(key): [\(device)]"
        case "partition": "partition: [[\(device)], [\(otherExampleDevice)]]"
        case "heal": "heal: true"
        case "wait": "wait: 30s"
        case "crash": "crash: {device: \(device), during: save}"
        case "restart": "restart: {device: \(device)}"
        case "resolve": "resolve: {device: \(device), document: \(document), choose: \(otherExampleDevice)}"
        case "move": "move: {device: \(device), document: \(document), to: shared}"
        case "writeFile": "writeFile: {device: \(device), document: \(document), text: \"Changed elsewhere\"}"
        case "import": "import: {device: \(device), document: Imported, text: \"Hello\"}"
        case "expect": "expect: {document: \(document), state: normal}"
        case "restore": "restore: {device: \(device), document: \(document), version: 1}"
        case "markVersion": "markVersion: {device: \(device), document: \(document), name: Draft}"
        default: "\(key): {device: \(device), document: \(document)}"
        }
    }

    /// The steps: a non-empty list.
    mutating func readSteps(_ node: Node) -> [Scenario.Step]? {
        guard let items = readList(node, "steps", example: "steps: [{sync: all}]") else { return nil }
        guard !items.isEmpty else {
            report(.invalidValue, at: node, "a scenario needs at least one step; write steps: [{sync: all}]")
            return nil
        }
        return items.compactMap { readStep($0) }
    }

    /// One step: a map with exactly one action key.
    mutating func readStep(_ node: Node) -> Scenario.Step? {
        guard case .mapping(let mapping) = node else {
            if case .scalar(let scalar) = node, Scenario.Action.keys.contains(scalar.string) {
                report(
                    .wrongType, at: node, "a step is a map with one action key; write - \(actionExample(scalar.string))"
                )
            } else {
                report(
                    .wrongType, at: node,
                    "a step is a map with one action key, not \(Self.shape(of: node)); write - sync: all, for example")
            }
            return nil
        }
        let entries = Array(mapping)
        guard let (key, value) = entries.first else {
            report(.missingKey, at: node, "this step has no action; write one, such as - sync: all")
            return nil
        }
        guard case .scalar(let keyScalar) = key else {
            report(
                .wrongType, at: key,
                "a step's action is a name, not \(Self.shape(of: key)); write - sync: all, for example")
            return nil
        }
        let action = keyScalar.string
        guard entries.count == 1 else {
            reportSeveralActions(action, entries.dropFirst().map(\.key), at: node)
            return nil
        }
        guard let read = readAction(action, key: key, value: value) else { return nil }
        checkRunning(read, at: node)
        return Scenario.Step(read, line: node.mark?.line ?? 0)
    }

    /// Reports a step that needs a device a `crash` stopped (until a `restart` brings it back), and a `restart` of
    /// a device that runs; follows the crashes and restarts. What a step cannot do is known from the file alone, so
    /// it is refused before anything runs rather than stopping the run half-way.
    private mutating func checkRunning(_ action: Scenario.Action, at node: Node) {
        func stopped(_ device: String) -> String? {
            crashed[device].map { "'\(device)' crashed at line \($0) and has not restarted" }
        }
        let restart = { (device: String) in "- restart: {device: \(YAMLText.scalar(device))}" }
        switch action {
        // A device the scenario does not declare is reported as unknown only, so it is never marked as crashed.
        case .restart(let device):
            guard crashed.removeValue(forKey: device) == nil, deviceNames?.contains(device) == true else { return }
            report(
                .deviceNotRunning, at: node,
                "'\(device)' is running here: restart brings a device back after a crash; "
                    + "crash it first (- crash: {device: \(YAMLText.scalar(device))}) or remove this step")
        case .crash(let device, _):
            if let problem = stopped(device) {
                report(
                    .deviceNotRunning, at: node,
                    "\(problem): it cannot crash again; restart it first: \(restart(device))")
            }
            if deviceNames?.contains(device) == true { crashed[device] = node.mark?.line ?? 0 }
        case .expect(let expectation):
            guard expectation.document != nil else { return }
            if let device = expectation.device {
                if let problem = stopped(device) {
                    report(
                        .deviceNotRunning, at: node,
                        "\(problem), so it shows no document; restart it first: \(restart(device))")
                }
            } else if let device = crashed.keys.min(), let problem = stopped(device) {
                report(
                    .deviceNotRunning, at: node,
                    "this expect checks every device, but \(problem); restart it first (\(restart(device))) "
                        + "or name the device to check, such as device: \(YAMLText.scalar(runningExample ?? device))")
            }
        case .create(let device, _, _, _, _), .edit(let device, _, _), .undo(let device, _), .redo(let device, _),
            .save(let device, _), .close(let device, _), .open(let device, _), .rename(let device, _, _),
            .delete(let device, _), .move(let device, _, _), .writeFile(let device, _, _),
            .importFile(let device, _, _, _), .resolve(let device, _, _), .restore(let device, _, _),
            .markVersion(let device, _, _):
            if let problem = stopped(device) {
                report(.deviceNotRunning, at: node, "\(problem); restart it first: \(restart(device))")
            }
        case .sync, .offline, .online, .partition, .heal, .wait:
            // Crashed devices are skipped by a sync and by waiting; a link can be cut or restored while down.
            return
        }
    }

    /// A declared device no crash stopped, for examples.
    private var runningExample: String? {
        deviceNames?.first { crashed[$0] == nil }
    }

    /// Explains a step map with more than one key: keys of the first action's own map that lost their indentation,
    /// a key beside the action that is no action, no action at all, or several actions in one step.
    private mutating func reportSeveralActions(_ action: String, _ others: [Node], at node: Node) {
        let names = others.map { $0.scalar?.string ?? Self.shape(of: $0) }
        let actions = ([action] + names).filter(Scenario.Action.keys.contains)
        if let inner = Self.actionFields[action], names.allSatisfy(inner.contains) {
            let verb = names.count == 1 ? "belongs" : "belong"
            report(
                .invalidValue, at: others[0],
                "\(NameSuggestion.list(names)) \(verb) inside '\(action)': indent under \(action), "
                    + "or write - \(actionExample(action))")
        } else if actions.count > 1 {
            report(
                .invalidValue, at: node,
                "a step has one action, but this one has \(NameSuggestion.list(actions)); put each in its own step")
        } else if let only = actions.first {
            let strays = ([action] + names).filter { $0 != only }
            let stray = strays.first { !(Self.actionFields[only] ?? []).contains($0) } ?? strays[0]
            let meant =
                NameSuggestion.nearest(to: stray, among: Scenario.Action.keys).map { " (did you mean '\($0)'?)" } ?? ""
            report(
                .unknownKey, at: node,
                "unknown key '\(stray)' beside the action '\(only)'\(meant); a step has its action key only, "
                    + "such as - \(actionExample(only))")
        } else if let (typo, meant) = ([action] + names).lazy
            .compactMap({ key in NameSuggestion.nearest(to: key, among: Scenario.Action.keys).map { (key, $0) } }).first
        {
            report(
                .unknownKey, at: node,
                "this step has no action; '\(typo)' is none (did you mean '\(meant)'?): write - \(actionExample(meant))"
            )
        } else {
            report(
                .missingKey, at: node,
                "this step has no action, only \(NameSuggestion.list([action] + names)); "
                    + "name the action and put them inside it, such as - \(actionExample("save"))")
        }
    }

    /// The action `name` with its value.
    private mutating func readAction(_ name: String, key: Node, value: Node) -> Scenario.Action? {
        let line = key.mark?.line ?? 0
        switch name {
        case "create": return readCreate(value, line: line)
        case "edit": return readEdit(value)
        case "undo", "redo", "save", "close", "open", "delete":
            guard let target = readTarget(name, value), let device = target.device, let document = target.document
            else { return nil }
            return switch name {
            case "undo": .undo(device: device, document: document.name)
            case "redo": .redo(device: device, document: document.name)
            case "save": .save(device: device, document: document.name)
            case "close": .close(device: device, document: document.name)
            case "open": .open(device: device, document: document.name)
            default: .delete(device: device, document: document.name)
            }
        case "rename": return readRename(value, line: line)
        case "sync": return readSync(value)
        case "offline", "online":
            let example = actionExample(name)
            guard let devices = readDeviceList(value, name, example: example) else { return nil }
            return name == "offline" ? .offline(devices) : .online(devices)
        case "partition": return readPartition(value)
        case "heal":
            guard let heal = readBool(value, "heal") else { return nil }
            guard heal else {
                report(.invalidValue, at: value, "heal: false does nothing; write heal: true to end the partition")
                return nil
            }
            return .heal
        case "wait":
            guard let duration = readDuration(value, "wait") else { return nil }
            guard duration >= .zero else {
                report(
                    .invalidValue, at: value,
                    "wait cannot go back in time ('\(duration)'); write 0s or more, such as wait: 30s")
                return nil
            }
            return .wait(duration)
        case "crash":
            let example = actionExample(name)
            guard let fields = readFields(value, "crash", allowed: Self.actionFields[name]!, example: example) else {
                return nil
            }
            let device = require(fields, "device", example: example).flatMap { readDevice($0, example: example) }
            let during: Scenario.CrashPoint? = fields["during"].flatMap { readWord($0, "during") }
            if fields["during"] != nil, during == nil { return nil }
            return device.map { .crash(device: $0, during: during) }
        case "restart":
            let example = actionExample(name)
            guard let fields = readFields(value, "restart", allowed: Self.actionFields[name]!, example: example) else {
                return nil
            }
            return require(fields, "device", example: example)
                .flatMap { readDevice($0, example: example) }
                .map { .restart(device: $0) }
        case "resolve": return readResolve(value)
        case "move": return readMove(value)
        case "writeFile": return readWriteFile(value)
        case "import": return readCreate(value, line: line, action: "import")
        case "expect": return readExpectation(value).map { .expect($0) }
        case "restore": return readRestore(value)
        case "markVersion": return readMarkVersion(value)
        default:
            let hint =
                NameSuggestion.nearest(to: name, among: Scenario.Action.keys).map { "did you mean '\($0)'?" }
                ?? "a step's action is one of " + NameSuggestion.list(Scenario.Action.keys, conjunction: "or")
            report(.unknownKey, at: key, "unknown action '\(name)'; \(hint)")
            return nil
        }
    }

    /// The map of an action that names a device and a document, with both read and checked.
    mutating func readTarget(_ action: String, _ value: Node)
        -> (fields: Fields, device: String?, document: (name: String, known: KnownDocument?)?)?
    {
        let example = actionExample(action)
        guard let fields = readFields(value, action, allowed: Self.actionFields[action]!, example: example) else {
            return nil
        }
        let device = require(fields, "device", example: example).flatMap { readDevice($0, example: example) }
        let document = require(fields, "document", example: example).flatMap { readDocument($0, example: example) }
        return (fields, device, document)
    }

    private mutating func readRename(_ value: Node, line: Int) -> Scenario.Action? {
        let example = actionExample("rename")
        guard let (fields, device, document) = readTarget("rename", value) else { return nil }
        let newName = require(fields, "to", example: example).flatMap { readName($0, "to", example: example) }
        guard let device, let document, let newName else { return nil }
        if let known = document.known {
            remember(newName, model: known.model, line: line)
        }
        return .rename(device: device, document: document.name, to: newName)
    }

    /// `restore: {device, document, version: N}` or `{…, at: 30s}`: exactly one of the two.
    private mutating func readRestore(_ value: Node) -> Scenario.Action? {
        let example = actionExample("restore")
        guard let (fields, device, document) = readTarget("restore", value) else { return nil }
        var reference: Scenario.VersionReference?
        switch (fields["version"], fields["at"]) {
        case (let node?, nil):
            if let number = readInteger(node, "version", example: example) {
                if number >= 1 {
                    reference = .number(number)
                } else {
                    report(.invalidValue, at: node, "versions are numbered from 1, oldest first; write \(example)")
                }
            }
        case (nil, let node?):
            if let time = readDuration(node, "at") {
                if time >= .zero {
                    reference = .at(time)
                } else {
                    report(.invalidValue, at: node, "at is a time of the run, 0s or later, such as at: 30s")
                }
            }
        case (_?, _?):
            report(.invalidValue, at: fields.node, "restore takes version or at, not both; write \(example)")
        case (nil, nil):
            report(.missingKey, at: fields.node, "restore needs the version to bring back; write \(example)")
        }
        guard let device, let document, let reference else { return nil }
        return .restore(device: device, document: document.name, version: reference)
    }

    /// `markVersion: {device, document, name}`.
    private mutating func readMarkVersion(_ value: Node) -> Scenario.Action? {
        let example = actionExample("markVersion")
        guard let (fields, device, document) = readTarget("markVersion", value) else { return nil }
        let name = require(fields, "name", example: example).flatMap { readText($0, "name", example: example) }
        guard let device, let document, let name else { return nil }
        return .markVersion(device: device, document: document.name, name: name)
    }

    private mutating func readSync(_ value: Node) -> Scenario.Action? {
        let example = "sync: all or sync: [\(exampleDevice), \(otherExampleDevice)]"
        switch value {
        case .scalar(let scalar) where scalar.string == "all":
            return .sync(.all)
        case .sequence:
            return readDeviceList(value, "sync", example: example).map { .sync(.devices($0)) }
        case _ where Self.isNull(value):
            report(.missingKey, at: value, "sync has no value; write \(example)")
            return nil
        case .scalar(let scalar) where deviceNames?.contains(scalar.string) ?? false:
            report(
                .wrongType, at: value,
                "sync takes all or a list of devices; write sync: [\(YAMLText.scalar(scalar.string))] or sync: all")
            return nil
        default:
            report(
                .wrongType, at: value,
                "sync takes all or a list of devices, not '\(value.scalar?.string ?? Self.shape(of: value))'; write \(example)"
            )
            return nil
        }
    }

    private mutating func readPartition(_ value: Node) -> Scenario.Action? {
        let example = actionExample("partition")
        guard let items = readList(value, "partition", example: example) else { return nil }
        var groups: [[String]] = []
        var named: [String] = []
        for item in items {
            guard let members = readList(item, "a group of partition", example: example) else { continue }
            guard !members.isEmpty else {
                report(.invalidValue, at: item, "a group of partition names no device; write \(example)")
                continue
            }
            var group: [String] = []
            for member in members {
                guard let name = readDevice(member, "a device in partition", example: example) else { continue }
                guard !named.contains(name) else {
                    let place = group.contains(name) ? "twice in one group" : "in two groups"
                    report(
                        .duplicateName, at: member,
                        "'\(name)' is \(place) of the partition; put each device in exactly one group")
                    continue
                }
                named.append(name)
                group.append(name)
            }
            groups.append(group)
        }
        let rest = deviceNames?.filter { !named.contains($0) } ?? []
        if deviceNames != nil, groups.count + (rest.isEmpty ? 0 : 1) < 2 {
            report(
                .invalidValue, at: value,
                "a partition needs at least two groups (the devices named in no group form one); write \(example)")
            return nil
        }
        return .partition(groups)
    }

    private mutating func readMove(_ value: Node) -> Scenario.Action? {
        let example = actionExample("move")
        guard let (fields, device, document) = readTarget("move", value) else { return nil }
        let container: Scenario.Container? = require(fields, "to", example: example).flatMap { readWord($0, "to") }
        guard let device, let document, let container else { return nil }
        return .move(device: device, document: document.name, to: container)
    }

    private mutating func readWriteFile(_ value: Node) -> Scenario.Action? {
        let example = actionExample("writeFile")
        guard let (fields, device, document) = readTarget("writeFile", value) else { return nil }
        let contentKeys = fields.names.filter { Scenario.Model(rawValue: $0) != nil }
        guard contentKeys.count == 1, let model = Scenario.Model(rawValue: contentKeys[0]) else {
            report(
                contentKeys.isEmpty ? .missingKey : .invalidValue, at: value,
                "writeFile takes the file's new contents, one of text, records or pages; write \(example)")
            return nil
        }
        if let known = document?.known?.model, known != model {
            report(
                .wrongModel, at: fields.key(model.rawValue)!,
                "'\(document!.name)' is a \(known) document; write its file as \(Self.contentsExample(known))")
            return nil
        }
        guard let contents = readContents(model, fields[model.rawValue]!), let device, let document else { return nil }
        return .writeFile(device: device, document: document.name, contents: contents)
    }

    private mutating func readResolve(_ value: Node) -> Scenario.Action? {
        let example = actionExample("resolve")
        guard let (fields, device, document) = readTarget("resolve", value) else { return nil }
        var choice: Scenario.Choice?
        if let node = require(fields, "choose", example: example),
            let word = readName(node, "choose", example: example)
        {
            switch word {
            case "latest": choice = .latest
            case "merge": choice = .merge
            case "keepBoth": choice = .keepBoth
            case _ where deviceNames?.contains(word) ?? true: choice = .device(word)
            default:
                let choices = (deviceNames ?? []) + Scenario.Choice.strategyWords
                let hint =
                    NameSuggestion.nearest(to: word, among: choices).map { "did you mean '\($0)'?" }
                    ?? "choose a device (\(NameSuggestion.list(deviceNames ?? [], conjunction: "or"))) "
                    + "or latest, merge or keepBoth"
                report(.unknownDevice, at: node, "choose names no device or strategy: '\(word)'; \(hint)")
            }
        }
        guard let device, let document, let choice else { return nil }
        return .resolve(device: device, document: document.name, choose: choice)
    }
}
