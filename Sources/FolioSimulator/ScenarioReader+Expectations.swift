import Yams

extension ScenarioReader {
    /// The keys of `expect` that speak of one document.
    static let documentExpectationKeys = [
        "device", "state", "conflictVersions", "text", "contains", "records", "images", "exists", "versions",
        "namedVersions", "losses",
    ]

    /// The expectation keys that fit only one model.
    static let modelExpectationKeys: [(key: String, model: Scenario.Model)] = [
        ("text", .text), ("contains", .text), ("records", .records), ("images", .pages),
    ]

    /// How to write a model's content expectations, for messages.
    static func expectationHint(_ model: Scenario.Model) -> String {
        switch model {
        case .text: "text: \"...\" or contains: \"...\""
        case .records: "records: {r1: {name: Ann}}"
        case .pages: "images: [cover.png]"
        }
    }

    /// An `expect` step: at least one assertion; document keys come with a document and fit its model.
    mutating func readExpectation(_ value: Node) -> Scenario.Expectation? {
        let example = actionExample("expect")
        guard let fields = readFields(value, "expect", allowed: Scenario.Expectation.keys, example: example) else {
            return nil
        }
        let errorsBefore = errors.count
        var expectation = Scenario.Expectation()
        var known: KnownDocument?
        if let node = fields["document"], let document = readDocument(node, example: example) {
            expectation.document = document.name
            known = document.known
        }
        if let node = fields["device"] {
            expectation.device = readDevice(node, example: "device: \(exampleDevice)")
        }
        if let node = fields["state"] {
            expectation.state = readWord(node, "state")
        }
        if let node = fields["conflictVersions"] {
            expectation.conflictVersions = readInteger(node, "conflictVersions", example: "conflictVersions: 2")
        }
        if let node = fields["text"] {
            expectation.text = readText(node, "text", example: "text: \"Hello world\\n\"")
        }
        if let node = fields["contains"] {
            expectation.contains = readText(node, "contains", example: "contains: \"milk\"")
        }
        if let node = fields["records"] {
            expectation.records = readExpectedRecords(node)
        }
        if let node = fields["images"] {
            expectation.images = readExpectedImages(node)
        }
        if let node = fields["exists"] {
            expectation.exists = readBool(node, "exists")
        }
        if let node = fields["converged"] {
            expectation.converged = readBool(node, "converged")
        }
        if let node = fields["lostChanges"] {
            expectation.lostChanges = readInteger(node, "lostChanges", example: "lostChanges: 0")
        }
        if let node = fields["versions"] {
            expectation.versions = readInteger(node, "versions", example: "versions: 3")
        }
        if let node = fields["namedVersions"] {
            let example = "namedVersions: [Draft, Sent to editor]"
            if let items = readList(node, "namedVersions", example: example) {
                let names = items.compactMap { readText($0, "a version's name", example: example) }
                if names.count == items.count { expectation.namedVersions = names }
            }
        }
        if let node = fields["losses"] {
            expectation.losses = readInteger(node, "losses", example: "losses: 0")
        }
        checkConsistency(fields, expectation, model: known?.model)
        return errors.count == errorsBefore ? expectation : nil
    }

    /// Reports an expectation that checks nothing, document keys without a document, keys of another model, and
    /// contents expected of a document expected not to exist.
    private mutating func checkConsistency(
        _ fields: Fields, _ expectation: Scenario.Expectation, model: Scenario.Model?
    ) {
        let assertions = fields.names.filter { $0 != "document" && $0 != "device" }
        if assertions.isEmpty, fields.unknownCount == 0 {
            report(
                .missingKey, at: fields.node,
                "expect checks nothing; add what to check, such as state: normal, text: \"...\", exists: true "
                    + "or converged: true")
        }
        let documentKeys = fields.names.filter(Self.documentExpectationKeys.contains)
        if fields["document"] == nil, let first = documentKeys.first {
            let verb = documentKeys.count == 1 ? "speaks" : "speak"
            report(
                .missingKey, at: fields.key(first)!,
                "\(NameSuggestion.list(documentKeys)) \(verb) of a document; add document: \(exampleDocument) to this expect"
            )
        }
        if let model, let document = expectation.document {
            for (key, keyModel) in Self.modelExpectationKeys where keyModel != model && fields[key] != nil {
                report(
                    .wrongModel, at: fields.key(key)!,
                    "'\(key)' checks a \(keyModel) document, but '\(document)' is a \(model) document; "
                        + "write \(Self.expectationHint(model))")
            }
        }
        if expectation.exists == false {
            let contents = fields.names.filter {
                [
                    "state", "conflictVersions", "text", "contains", "records", "images", "versions", "namedVersions",
                    "losses",
                ]
                .contains($0)
            }
            if !contents.isEmpty {
                report(
                    .invalidValue, at: fields.key("exists")!,
                    "a document that does not exist has no \(NameSuggestion.list(contents)); "
                        + "drop \(contents.count == 1 ? "it" : "them") or write exists: true")
            }
        }
    }

    /// `{r1: {name: Ann}}`: records by id with the fields they must at least have.
    private mutating func readExpectedRecords(_ node: Node) -> [String: [String: String]]? {
        let example = "records: {r1: {name: Ann}}"
        guard let pairs = readPairs(node, "records", example: example) else { return nil }
        var records: [String: [String: String]] = [:]
        for pair in pairs {
            guard let id = readName(pair.key, "a record id", example: example),
                let fields = readFieldMap(
                    pair.value, "the fields of record '\(id)'", example: "\(YAMLText.scalar(id)): {name: Ann}")
            else { continue }
            guard records.updateValue(fields, forKey: id) == nil else {
                report(.duplicateName, at: pair.key, "record '\(id)' is given twice; give each record once")
                continue
            }
        }
        return records.count == pairs.count ? records : nil
    }

    /// `[cover.png]`: exactly these image names, each once.
    private mutating func readExpectedImages(_ node: Node) -> Set<String>? {
        guard let items = readList(node, "images", example: "images: [cover.png]") else { return nil }
        var names: Set<String> = []
        for item in items {
            guard let name = readImageName(item, "an image name") else { continue }
            guard names.insert(name).inserted else {
                report(.duplicateName, at: item, "image '\(name)' is listed twice; list each image once")
                continue
            }
        }
        return names.count == items.count ? names : nil
    }
}
