import FolioModels
import Yams

extension ScenarioReader {
    /// The largest image a scenario may put (`putImage` or initial contents): 64 MiB.
    static let maximumImageBytes = 64 << 20

    /// How to write each model's operations, for messages.
    static func operationsHint(_ model: Scenario.Model) -> String {
        switch model {
        case .text:
            "insert: {at: 0, text: \"Hi \"}, delete: {at: 0, count: 3}, append: \" more\" or replace: \"whole text\""
        case .records:
            "add: {record: r1, fields: {name: Ann}}, set: {record: r1, field: name, value: Bob} or remove: {record: r1}"
        case .pages:
            "insert: {at: 0, text: \"Hi \"}, delete: {at: 0, count: 3}, setText: \"...\", "
                + "putImage: {name: cover.png, bytes: 1024} or removeImage: {name: cover.png}"
        }
    }

    /// How to write each model's initial contents, for messages.
    static func contentsExample(_ model: Scenario.Model) -> String {
        switch model {
        case .text: "text: \"Hello\""
        case .records: "records: {r1: {name: Ann}}"
        case .pages: "pages: {text: \"Hello\", images: {cover.png: 1024}}"
        }
    }

    // MARK: create

    /// A `create` step. It makes the document's name known with its model: the one it names, else the one its
    /// contents imply, else the scenario's default.
    mutating func readCreate(_ value: Node, line: Int, action: String = "create") -> Scenario.Action? {
        let example = actionExample(action)
        guard let fields = readFields(value, action, allowed: Self.actionFields[action]!, example: example) else {
            return nil
        }
        let device = require(fields, "device", example: example).flatMap { readDevice($0, example: example) }
        let documentNode = require(fields, "document", example: example)
        let document = documentNode.flatMap { readName($0, "document", example: example) }
        let explicitModel: Scenario.Model? = fields["model"].flatMap { readWord($0, "model") }
        let modelReadable = fields["model"] == nil || explicitModel != nil

        let contentKeys = fields.names.filter { Scenario.Model(rawValue: $0) != nil }
        if contentKeys.count > 1 {
            report(
                .invalidValue, at: fields.key(contentKeys[1])!,
                "\(action) takes one of text, records or pages, but this one has \(NameSuggestion.list(contentKeys)); "
                    + "keep the one that fits the document's model")
        }
        let contentModel = contentKeys.first.flatMap(Scenario.Model.init(rawValue:))
        let model = explicitModel ?? contentModel ?? defaultModel
        var contents: Scenario.Contents?
        if let contentModel {
            contents = readContents(contentModel, fields[contentModel.rawValue]!)
            if let explicitModel, explicitModel != contentModel {
                report(
                    .wrongModel, at: fields.key(contentModel.rawValue)!,
                    "'\(contentModel)' gives a \(contentModel) document's contents, but this \(action) makes a "
                        + "\(explicitModel) document; write \(Self.contentsExample(explicitModel)) or model: \(contentModel)"
                )
            }
        }

        if let document, let documentNode {
            if let known = documents[document], let knownModel = known.model, modelReadable, knownModel != model {
                report(
                    .wrongModel, at: documentNode,
                    "'\(document)' was created as a \(knownModel) document at line \(known.line); a document keeps "
                        + "one model, so give this \(model) document another name")
            } else {
                remember(document, model: modelReadable ? model : nil, line: line)
            }
        }
        // The shared container unless the step says otherwise, so that a created document syncs.
        var container: Scenario.Container? = .shared
        if let node = fields["in"] { container = readWord(node, "in") }
        guard let device, let document, let container, modelReadable, contentKeys.isEmpty || contents != nil else {
            return nil
        }
        guard action == "import" else {
            return .create(device: device, document: document, model: model, contents: contents, container: container)
        }
        guard let contents else {
            report(.missingKey, at: value, "import takes the imported file's contents; write \(example)")
            return nil
        }
        return .importFile(device: device, document: document, model: model, contents: contents)
    }

    /// Initial contents of `model`.
    mutating func readContents(_ model: Scenario.Model, _ node: Node) -> Scenario.Contents? {
        switch model {
        case .text:
            return readText(node, "text", example: "text: \"Hello\" (or text: \"\" for none)").map { .text($0) }
        case .records:
            let example = Self.contentsExample(.records)
            guard let pairs = readPairs(node, "records", example: example) else { return nil }
            var records: [RecordsDocument.Record] = []
            for pair in pairs {
                guard let id = readName(pair.key, "a record id", example: example),
                    let fields = readFieldMap(
                        pair.value, "the fields of record '\(id)'", example: "\(YAMLText.scalar(id)): {name: Ann}")
                else { continue }
                guard !records.contains(where: { $0.id == id }) else {
                    report(.duplicateName, at: pair.key, "record '\(id)' is given twice; give each record its own id")
                    continue
                }
                records.append(RecordsDocument.Record(id: id, fields: fields))
            }
            return records.count == pairs.count ? .records(records) : nil
        case .pages:
            let example = Self.contentsExample(.pages)
            guard let fields = readFields(node, "pages", allowed: ["text", "images"], example: example) else {
                return nil
            }
            let text = fields["text"].flatMap { readText($0, "text", example: "text: \"Hello\"") }
            let images = fields["images"].flatMap { readImageSizes($0) }
            guard fields["text"] == nil || text != nil, fields["images"] == nil || images != nil else { return nil }
            return .pages(text: text ?? "", images: images ?? [:])
        }
    }

    /// `{cover.png: 1024}`: image names with their sizes.
    private mutating func readImageSizes(_ node: Node) -> [String: Int]? {
        let example = "images: {cover.png: 1024}"
        guard let pairs = readPairs(node, "images", example: example) else { return nil }
        var images: [String: Int] = [:]
        for pair in pairs {
            guard let name = readImageName(pair.key, "an image name"),
                let size = readInteger(
                    pair.value, "the size of image '\(name)'", example: "\(YAMLText.scalar(name)): 1024",
                    in: 0...Self.maximumImageBytes)
            else { continue }
            guard images.updateValue(size, forKey: name) == nil else {
                report(.duplicateName, at: pair.key, "image '\(name)' is given twice; give each image its own name")
                continue
            }
        }
        return images.count == pairs.count ? images : nil
    }

    /// A name that can name an image of a pages document (one path component, such as `cover.png`).
    mutating func readImageName(_ node: Node, _ what: String) -> String? {
        guard let name = readName(node, what, example: "name: cover.png") else { return nil }
        guard PagesDocument.isValidImageName(name) else {
            report(
                .invalidValue, at: node,
                "'\(name)' cannot name an image: write a file name without '/', such as cover.png")
            return nil
        }
        return name
    }

    /// The entries of a map whose keys are data, not format keys (record ids, field names, image names), in file
    /// order.
    mutating func readPairs(_ node: Node, _ what: String, example: String) -> [(key: Node, value: Node)]? {
        guard case .mapping(let mapping) = node else {
            reportNot("a map", node, what, example: example)
            return nil
        }
        return Array(mapping)
    }

    /// `{name: Ann, city: Oslo}`: field names with text values; nothing at all is no fields.
    mutating func readFieldMap(_ node: Node, _ what: String, example: String) -> [String: String]? {
        if Self.isNull(node) { return [:] }
        guard let pairs = readPairs(node, what, example: example) else { return nil }
        var fields: [String: String] = [:]
        for pair in pairs {
            guard let name = readName(pair.key, "a field name", example: example),
                let value = readText(pair.value, "field '\(name)'", example: "\(YAMLText.scalar(name)): Ann")
            else { continue }
            guard fields.updateValue(value, forKey: name) == nil else {
                report(.duplicateName, at: pair.key, "field '\(name)' is given twice; give each field once")
                continue
            }
        }
        return fields.count == pairs.count ? fields : nil
    }

    // MARK: edit

    /// An `edit` step: a device, a document and exactly one operation of the document's model.
    mutating func readEdit(_ value: Node) -> Scenario.Action? {
        guard let target = readTarget("edit", value) else { return nil }
        let fields = target.fields
        let model = target.document?.known?.model
        let operationKeys = fields.names.filter { !["device", "document"].contains($0) }
        guard let key = operationKeys.first else {
            let hint =
                model.map { "for a \($0) document write \(Self.operationsHint($0))" }
                ?? Scenario.Model.allCases.map { "for \($0) \(Self.operationsHint($0))" }.joined(separator: "; ")
            report(.missingKey, at: fields.node, "edit needs one operation: \(hint)")
            return nil
        }
        if operationKeys.count > 1 {
            report(
                .invalidValue, at: fields.key(operationKeys[1])!,
                "an edit makes one operation, but this one has \(NameSuggestion.list(operationKeys)); "
                    + "put each in its own edit step")
        }
        let operation = readOperation(key, fields[key]!)
        if let operation, let model, let document = target.document, !operation.edits(model) {
            let line = document.known.map { " (created at line \($0.line))" } ?? ""
            report(
                .wrongModel, at: fields.key(key)!,
                "'\(key)' is an operation on \(operation.modelsDescription) documents, but '\(document.name)' is a \(model) "
                    + "document\(line); write \(Self.operationsHint(model))")
        }
        guard let device = target.device, let document = target.document, let operation, operationKeys.count == 1
        else { return nil }
        return .edit(device: device, document: document.name, operation: operation)
    }

    /// The operation `key` with its value. `insert` and `delete` read the same on text and pages documents.
    private mutating func readOperation(_ key: String, _ node: Node) -> Scenario.Operation? {
        switch key {
        case "insert":
            let example = "insert: {at: 0, text: \"Hi \"}"
            guard let fields = readFields(node, key, allowed: ["at", "text"], example: example) else { return nil }
            let position = require(fields, "at", example: example).flatMap { readInteger($0, "at", example: "at: 0") }
            let text = require(fields, "text", example: example).flatMap {
                readText($0, "text", example: "text: \"Hi \"")
            }
            guard let position, let text else { return nil }
            return .insert(at: position, text: text)
        case "delete":
            let example = "delete: {at: 0, count: 3}"
            guard let fields = readFields(node, key, allowed: ["at", "count"], example: example) else { return nil }
            let position = require(fields, "at", example: example).flatMap { readInteger($0, "at", example: "at: 0") }
            let count = require(fields, "count", example: example).flatMap {
                readInteger($0, "count", example: "count: 3")
            }
            guard let position, let count else { return nil }
            return .delete(at: position, count: count)
        case "append":
            return readText(node, key, example: "append: \" more\"").map { .append($0) }
        case "replace":
            return readText(node, key, example: "replace: \"whole text\"").map { .replace($0) }
        case "add":
            let example = "add: {record: r1, fields: {name: Ann}}"
            guard let fields = readFields(node, key, allowed: ["record", "fields"], example: example) else {
                return nil
            }
            let record = require(fields, "record", example: example).flatMap {
                readName($0, "record", example: "record: r1")
            }
            let values = fields["fields"].flatMap { readFieldMap($0, "fields", example: "fields: {name: Ann}") }
            guard let record, fields["fields"] == nil || values != nil else { return nil }
            return .add(record: record, fields: values ?? [:])
        case "set":
            let example = "set: {record: r1, field: name, value: Bob}"
            guard let fields = readFields(node, key, allowed: ["record", "field", "value"], example: example) else {
                return nil
            }
            let record = require(fields, "record", example: example).flatMap {
                readName($0, "record", example: "record: r1")
            }
            let field = require(fields, "field", example: example).flatMap {
                readName($0, "field", example: "field: name")
            }
            let value = require(fields, "value", example: example).flatMap {
                readText($0, "value", example: "value: Bob")
            }
            guard let record, let field, let value else { return nil }
            return .set(record: record, field: field, value: value)
        case "remove":
            let example = "remove: {record: r1}"
            guard let fields = readFields(node, key, allowed: ["record"], example: example) else { return nil }
            return require(fields, "record", example: example)
                .flatMap { readName($0, "record", example: "record: r1") }
                .map { .remove(record: $0) }
        case "setText":
            return readText(node, key, example: "setText: \"Hello\"").map { .setText($0) }
        case "putImage":
            let example = "putImage: {name: cover.png, bytes: 1024}"
            guard let fields = readFields(node, key, allowed: ["name", "bytes"], example: example) else { return nil }
            let name = require(fields, "name", example: example).flatMap { readImageName($0, "name") }
            let bytes = require(fields, "bytes", example: example).flatMap {
                readInteger($0, "bytes", example: "bytes: 1024", in: 0...Self.maximumImageBytes)
            }
            guard let name, let bytes else { return nil }
            return .putImage(name: name, bytes: bytes)
        default:
            let example = "removeImage: {name: cover.png}"
            guard let fields = readFields(node, key, allowed: ["name"], example: example) else { return nil }
            return require(fields, "name", example: example)
                .flatMap { readImageName($0, "name") }
                .map { .removeImage(name: $0) }
        }
    }
}
