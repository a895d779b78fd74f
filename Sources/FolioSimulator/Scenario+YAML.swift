extension Scenario {
    /// The scenario as a scenario file, in canonical form.
    ///
    /// The same scenario always gives the same bytes, and ``ScenarioParser/parse(yaml:file:)`` reads them back to an
    /// equal scenario. The form: the top-level keys in the order `docs/scenarios.md` gives them, with `name`,
    /// `seed`, `model` and `strategy` always written and `description`, `network` and `clockSkew` only when they say
    /// something; then one step per line, as a flow map (`- edit: {device: iPad, document: Notes, append: "x"}`),
    /// so the N-th step is on line `steps line + N`. Unordered maps (fields, images, expected records) are written in
    /// key order by Unicode scalars; a `create` names its model only when it is not the scenario's, and its container
    /// (`in`) only when it is not the shared one.
    ///
    /// - Complexity: O(size of the scenario).
    public var yaml: String {
        var lines: [String] = []
        lines.append("name: \(YAMLText.scalar(name))")
        if let description {
            lines.append("description: \(YAMLText.scalar(description))")
        }
        lines.append("seed: \(seed)")
        lines.append("model: \(model)")
        lines.append("strategy: \(strategy)")
        lines.append("devices:")
        for device in devices {
            lines.append("  - name: \(YAMLText.scalar(device.name))")
            if device.clockSkew != .zero {
                lines.append("    clockSkew: \(device.clockSkew)")
            }
        }
        if network != .perfect {
            lines.append("network:")
            lines.append("  latency: \(network.latency)")
            lines.append("  loss: \(network.loss)")
            lines.append("  duplicate: \(network.duplicate)")
            lines.append("  reorder: \(network.reorder)")
        }
        lines.append("steps:")
        for step in steps {
            lines.append("  - \(step.action.key): \(yaml(of: step.action))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// One step as the scenario file writes it, such as `edit: {device: iPad, document: Notes, append: "x"}`:
    /// how timelines and messages name a step.
    public func yamlLine(of action: Action) -> String {
        "\(action.key): \(yaml(of: action))"
    }

    /// The value of an action's key.
    private func yaml(of action: Action) -> String {
        func target(_ device: String, _ document: String) -> [(key: String, value: String)] {
            [("device", YAMLText.scalar(device)), ("document", YAMLText.scalar(document))]
        }
        switch action {
        case .create(let device, let document, let model, let contents, let container):
            var pairs = target(device, document)
            if model != self.model {
                pairs.append(("model", model.rawValue))
            }
            if let contents {
                pairs.append((contents.model.rawValue, Self.yaml(of: contents)))
            }
            if container != .shared {
                pairs.append(("in", container.rawValue))
            }
            return YAMLText.flowMap(pairs)
        case .edit(let device, let document, let operation):
            return YAMLText.flowMap(target(device, document) + [(operation.key, Self.yaml(of: operation))])
        case .undo(let device, let document), .redo(let device, let document), .save(let device, let document),
            .close(let device, let document), .open(let device, let document), .delete(let device, let document):
            return YAMLText.flowMap(target(device, document))
        case .rename(let device, let document, let newName):
            return YAMLText.flowMap(target(device, document) + [("to", YAMLText.scalar(newName))])
        case .move(let device, let document, let container):
            return YAMLText.flowMap(target(device, document) + [("to", container.rawValue)])
        case .writeFile(let device, let document, let contents):
            return YAMLText.flowMap(target(device, document) + [(contents.model.rawValue, Self.yaml(of: contents))])
        case .importFile(let device, let document, let model, let contents):
            var pairs = target(device, document)
            if model != contents.model { pairs.append(("model", model.rawValue)) }
            return YAMLText.flowMap(pairs + [(contents.model.rawValue, Self.yaml(of: contents))])
        case .sync(.all):
            return "all"
        case .sync(.devices(let devices)), .offline(let devices), .online(let devices):
            return Self.list(devices)
        case .partition(let groups):
            return YAMLText.flowList(groups.map(Self.list))
        case .heal:
            return "true"
        case .wait(let duration):
            return duration.description
        case .crash(let device, let during):
            var pairs = [(key: "device", value: YAMLText.scalar(device))]
            if let during {
                pairs.append(("during", during.rawValue))
            }
            return YAMLText.flowMap(pairs)
        case .restart(let device):
            return YAMLText.flowMap([("device", YAMLText.scalar(device))])
        case .resolve(let device, let document, let choice):
            let chosen =
                switch choice {
                case .device(let name): YAMLText.scalar(name)
                case .latest: "latest"
                case .merge: "merge"
                case .keepBoth: "keepBoth"
                }
            return YAMLText.flowMap(target(device, document) + [("choose", chosen)])
        case .expect(let expectation):
            return Self.yaml(of: expectation)
        case .restore(let device, let document, .number(let number)):
            return YAMLText.flowMap(target(device, document) + [("version", "\(number)")])
        case .restore(let device, let document, .at(let time)):
            return YAMLText.flowMap(target(device, document) + [("at", time.description)])
        case .markVersion(let device, let document, let name):
            return YAMLText.flowMap(target(device, document) + [("name", YAMLText.scalar(name))])
        }
    }

    private static func yaml(of contents: Contents) -> String {
        switch contents {
        case .text(let text):
            return YAMLText.scalar(text)
        case .records(let records):
            return YAMLText.flowMap(records.map { (YAMLText.scalar($0.id), fieldMap($0.fields)) })
        case .pages(let text, let images):
            let sizes = images.sorted { $0.key.precedesByScalars($1.key) }.map {
                (YAMLText.scalar($0.key), "\($0.value)")
            }
            return YAMLText.flowMap([("text", YAMLText.scalar(text)), ("images", YAMLText.flowMap(sizes))])
        }
    }

    private static func yaml(of operation: Operation) -> String {
        switch operation {
        case .insert(let position, let text):
            YAMLText.flowMap([("at", "\(position)"), ("text", YAMLText.scalar(text))])
        case .delete(let position, let count):
            YAMLText.flowMap([("at", "\(position)"), ("count", "\(count)")])
        case .append(let text), .replace(let text), .setText(let text):
            YAMLText.scalar(text)
        case .add(let record, let fields):
            YAMLText.flowMap([("record", YAMLText.scalar(record)), ("fields", fieldMap(fields))])
        case .set(let record, let field, let value):
            YAMLText.flowMap([
                ("record", YAMLText.scalar(record)), ("field", YAMLText.scalar(field)),
                ("value", YAMLText.scalar(value)),
            ])
        case .remove(let record):
            YAMLText.flowMap([("record", YAMLText.scalar(record))])
        case .putImage(let name, let bytes):
            YAMLText.flowMap([("name", YAMLText.scalar(name)), ("bytes", "\(bytes)")])
        case .removeImage(let name):
            YAMLText.flowMap([("name", YAMLText.scalar(name))])
        }
    }

    private static func yaml(of expectation: Expectation) -> String {
        var pairs: [(key: String, value: String)] = []
        if let document = expectation.document { pairs.append(("document", YAMLText.scalar(document))) }
        if let device = expectation.device { pairs.append(("device", YAMLText.scalar(device))) }
        if let state = expectation.state { pairs.append(("state", state.rawValue)) }
        if let count = expectation.conflictVersions { pairs.append(("conflictVersions", "\(count)")) }
        if let text = expectation.text { pairs.append(("text", YAMLText.scalar(text))) }
        if let text = expectation.contains { pairs.append(("contains", YAMLText.scalar(text))) }
        if let records = expectation.records {
            let sorted = records.sorted { $0.key.precedesByScalars($1.key) }
            pairs.append(("records", YAMLText.flowMap(sorted.map { (YAMLText.scalar($0.key), fieldMap($0.value)) })))
        }
        if let images = expectation.images {
            pairs.append(("images", list(images.sorted { $0.precedesByScalars($1) })))
        }
        if let exists = expectation.exists { pairs.append(("exists", "\(exists)")) }
        if let converged = expectation.converged { pairs.append(("converged", "\(converged)")) }
        if let count = expectation.lostChanges { pairs.append(("lostChanges", "\(count)")) }
        if let count = expectation.versions { pairs.append(("versions", "\(count)")) }
        if let names = expectation.namedVersions { pairs.append(("namedVersions", Self.list(names))) }
        if let count = expectation.losses { pairs.append(("losses", "\(count)")) }
        return YAMLText.flowMap(pairs)
    }

    private static func fieldMap(_ fields: [String: String]) -> String {
        YAMLText.flowMap(
            fields.sorted { $0.key.precedesByScalars($1.key) }
                .map { (YAMLText.scalar($0.key), YAMLText.scalar($0.value)) })
    }

    private static func list(_ names: [String]) -> String {
        YAMLText.flowList(names.map(YAMLText.scalar))
    }
}
