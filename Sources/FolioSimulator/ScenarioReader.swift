import Yams

/// Turns the YAML nodes of a scenario file into a ``Scenario``, collecting every problem instead of stopping at the
/// first.
///
/// Each `read…` method reports what is wrong with its node and returns `nil` (or a partial value) so reading goes on;
/// ``ScenarioParser`` throws when any problem was reported, so a partial value never escapes.
struct ScenarioReader {
    /// The file name errors carry.
    let file: String
    /// The problems found so far, in the order they were found.
    private(set) var errors: [ScenarioError] = []

    /// The model of documents whose `create` names none.
    var defaultModel: Scenario.Model = .text
    /// The declared device names in file order, or `nil` when the devices could not be read (then steps' device
    /// names are not checked, rather than reported once per step).
    var deviceNames: [String]?
    /// The documents that earlier steps create or rename to, by display name.
    var documents: [String: KnownDocument] = [:]
    /// The same names in the order they became known (for suggestions and examples).
    var documentOrder: [String] = []
    /// The devices that a `crash` step stopped and no `restart` brought back yet, with the crash's line.
    var crashed: [String: Int] = [:]

    /// What the reader knows of a document name.
    struct KnownDocument {
        /// The document's model, or `nil` when its `create` step did not say it readably.
        var model: Scenario.Model?
        /// The line of the step that made the name known.
        var line: Int
    }

    /// The file's lines, to look at how a scalar was spelled.
    private let sourceLines: [Substring]

    init(file: String, source: String) {
        self.file = file
        sourceLines = source.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
    }

    // MARK: Reporting

    /// Records a problem at `node`'s position.
    mutating func report(_ code: ScenarioErrorCode, at node: Node, _ message: String) {
        report(code, at: node.mark, message)
    }

    /// Records a problem at `mark`, or at the start of the file when there is none.
    mutating func report(_ code: ScenarioErrorCode, at mark: Mark?, _ message: String) {
        errors.append(ScenarioError(code, file: file, line: mark?.line ?? 1, column: mark?.column ?? 1, message))
    }

    // MARK: Maps

    /// The entries of a mapping node whose keys are all known at that place.
    struct Fields {
        /// The mapping node.
        let node: Node
        /// What the map is, in messages (`create`, `the network`).
        let context: String
        /// The known entries, in file order.
        let entries: [(name: String, key: Node, value: Node)]
        /// The known keys that unknown keys of this map were taken for (`device` for `devise`): their absence is
        /// not reported again.
        let suggested: [String]
        /// How many keys of the map were unknown (and left out).
        let unknownCount: Int

        /// The value of `name`, if the map has it.
        subscript(name: String) -> Node? {
            entries.first { $0.name == name }?.value
        }

        /// The key node of `name`, if the map has it.
        func key(_ name: String) -> Node? {
            entries.first { $0.name == name }?.key
        }

        /// The known keys present, in file order.
        var names: [String] { entries.map(\.name) }
    }

    /// Reads `node` as a map whose keys must be among `allowed`: an unknown key is reported with the nearest known
    /// one and left out.
    ///
    /// - Parameters:
    ///   - context: what the map is, in messages (`create`, `the network`).
    ///   - example: how to write such a map, for the message when `node` is not one.
    mutating func readFields(_ node: Node, _ context: String, allowed: [String], example: String) -> Fields? {
        guard case .mapping(let mapping) = node else {
            reportNot("a map", node, context, example: example)
            return nil
        }
        var entries: [(name: String, key: Node, value: Node)] = []
        var suggested: [String] = []
        var unknownCount = 0
        for (key, value) in mapping {
            guard case .scalar(let scalar) = key else {
                report(
                    .wrongType, at: key,
                    "a key of \(context) must be a name, not \(Self.shape(of: key)); write \(example)")
                continue
            }
            guard allowed.contains(scalar.string) else {
                let nearest = NameSuggestion.nearest(to: scalar.string, among: allowed)
                suggested += nearest.map { [$0] } ?? []
                unknownCount += 1
                let hint =
                    nearest.map { "did you mean '\($0)'?" }
                    ?? "\(context) takes " + NameSuggestion.list(allowed, conjunction: "or")
                report(.unknownKey, at: key, "unknown key '\(scalar.string)'; \(hint)")
                continue
            }
            entries.append((scalar.string, key, value))
        }
        return Fields(node: node, context: context, entries: entries, suggested: suggested, unknownCount: unknownCount)
    }

    /// The value of a key the map must have, or `nil` after reporting its absence.
    mutating func require(_ fields: Fields, _ name: String, example: String) -> Node? {
        if let value = fields[name] { return value }
        guard !fields.suggested.contains(name) else { return nil }
        report(.missingKey, at: fields.node, "\(fields.context) needs '\(name)'; write \(example)")
        return nil
    }

    // MARK: Scalars

    /// Whether `node` is a plain scalar that YAML reads as null (`~`, `null` or nothing at all).
    static func isNull(_ node: Node) -> Bool {
        guard case .scalar(let scalar) = node, scalar.style == .plain || scalar.style == .any else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(scalar.string)
    }

    /// How a node looks, for messages: `a map`, `a list`, `text`, `nothing`.
    static func shape(of node: Node) -> String {
        switch node {
        case .mapping: "a map"
        case .sequence: "a list"
        case .scalar where isNull(node): "nothing"
        case .scalar: "text"
        case .alias: "an alias"
        }
    }

    /// The text of a scalar, exactly as written (a number or a boolean is read as its spelling), or `nil` after
    /// reporting a map, a list or a missing value.
    mutating func readText(_ node: Node, _ what: String, example: String) -> String? {
        guard case .scalar(let scalar) = node, !Self.isNull(node) else {
            reportNot("a single value", node, what, example: example)
            return nil
        }
        return restoringByteOrderMark(scalar)
    }

    /// The scalar's text, with the U+FEFF it started with when Yams dropped it.
    ///
    /// Yams decodes each scalar with Foundation, which takes a leading byte order mark for an encoding signature and
    /// drops it. In a scenario file U+FEFF can only be written as an escape in a double-quoted scalar (YAML does not
    /// allow it as a character), so the spelling at the scalar's position tells whether one was dropped.
    private func restoringByteOrderMark(_ scalar: Node.Scalar) -> String {
        guard scalar.style == .doubleQuoted, let mark = scalar.mark, mark.line >= 1, mark.line <= sourceLines.count
        else { return scalar.string }
        // Count the byte order marks the spelling starts with (`"\uFEFF\U0000feff…`) and those the text kept. By
        // scalars, not characters: a combining mark after an escape joins its last digit into one character.
        let escapes = ["\\ufeff", "\\u0000feff"].map { Array($0.unicodeScalars) }
        var spelling = sourceLines[mark.line - 1].unicodeScalars.dropFirst(mark.column).prefix(1100)
            .map { $0.properties.isUppercase && $0.isASCII ? Unicode.Scalar($0.value + 32)! : $0 }[...]
        var spelled = 0
        while let escape = escapes.first(where: { spelling.starts(with: $0) }) {
            spelling = spelling.dropFirst(escape.count)
            spelled += 1
        }
        let kept = scalar.string.unicodeScalars.prefix { $0 == "\u{FEFF}" }.count
        return spelled > kept ? "\u{FEFF}" + scalar.string : scalar.string
    }

    /// Like ``readText(_:_:example:)``, and the text must not be empty.
    mutating func readName(_ node: Node, _ what: String, example: String) -> String? {
        guard let text = readText(node, what, example: example) else { return nil }
        guard !text.isEmpty else {
            report(.invalidValue, at: node, "\(what) cannot be empty; write \(example)")
            return nil
        }
        return text
    }

    /// A whole number in `range`, written in decimal digits.
    mutating func readInteger(_ node: Node, _ what: String, example: String, in range: ClosedRange<Int> = 0...Int.max)
        -> Int?
    {
        guard let text = readText(node, what, example: example) else { return nil }
        let body = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !body.isEmpty, body.allSatisfy({ $0.isASCII && $0.isWholeNumber }), let value = Int(text) else {
            if !body.isEmpty, body.allSatisfy({ $0.isASCII && $0.isWholeNumber }) {
                report(.invalidValue, at: node, "\(what) is too large: '\(text)'; write \(example)")
            } else {
                report(.wrongType, at: node, "\(what) must be a whole number, not '\(text)'; write \(example)")
            }
            return nil
        }
        guard range.contains(value) else {
            let bounds =
                range.upperBound == .max
                ? "\(range.lowerBound) or more" : "from \(range.lowerBound) to \(range.upperBound)"
            report(.invalidValue, at: node, "\(what) must be \(bounds), not \(value); write \(example)")
            return nil
        }
        return value
    }

    /// `true` or `false` (any capitalization).
    mutating func readBool(_ node: Node, _ what: String) -> Bool? {
        guard let text = readText(node, what, example: "\(what): true") else { return nil }
        switch text.lowercased() {
        case "true": return true
        case "false": return false
        default:
            report(
                .wrongType, at: node, "\(what) is true or false, not '\(text)'; write \(what): true or \(what): false")
            return nil
        }
    }

    /// A duration such as `250ms`, `30s`, `5m` or `2h`, optionally negative.
    mutating func readDuration(_ node: Node, _ what: String) -> SimulatedDuration? {
        guard let text = readText(node, what, example: "\(what): 30s") else { return nil }
        if let duration = SimulatedDuration(parsing: text) { return duration }
        switch DurationMisspelling(text) {
        case .duration(let meant):
            report(.invalidValue, at: node, "'\(text)' is not a duration; write \(meant)")
        case .unitless(let number):
            report(
                .invalidValue, at: node,
                "'\(text)' has no unit; write \(number)s, or \(number)ms, \(number)m or \(number)h")
        case .tooLong:
            report(
                .invalidValue, at: node,
                "'\(text)' is longer than a scenario allows; write at most \(SimulatedDuration.maximum) (one year)")
        case nil:
            report(.invalidValue, at: node, "'\(text)' is not a duration; write 250ms, 30s, 5m or 2h")
        }
        return nil
    }

    /// A probability: a decimal number from 0 to 1.
    mutating func readProbability(_ node: Node, _ what: String) -> Double? {
        guard let text = readText(node, what, example: "\(what): 0.1") else { return nil }
        let numeric = !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isWholeNumber || "+-.eE".contains($0)) }
        guard numeric, let value = Double(text), value.isFinite, (0...1).contains(value) else {
            report(
                .invalidValue, at: node,
                "'\(text)' is not a probability; write a number from 0 to 1, such as \(what): 0.1")
            return nil
        }
        return value
    }

    /// One of the words of `Word` (an enum over the file's words), suggesting the nearest on a miss.
    mutating func readWord<Word: RawRepresentable & CaseIterable>(_ node: Node, _ what: String) -> Word?
    where Word.RawValue == String {
        let words = Word.allCases.map(\.rawValue)
        guard let text = readText(node, what, example: "\(what): \(words[0])") else { return nil }
        if let word = Word(rawValue: text) { return word }
        let hint =
            NameSuggestion.nearest(to: text, among: words).map { "did you mean '\($0)'?" }
            ?? "write " + NameSuggestion.list(words, conjunction: "or")
        report(.invalidValue, at: node, "unknown \(what) '\(text)'; \(hint)")
        return nil
    }

    /// The items of a list.
    mutating func readList(_ node: Node, _ what: String, example: String) -> [Node]? {
        guard case .sequence(let sequence) = node else {
            reportNot("a list", node, what, example: example)
            return nil
        }
        return Array(sequence)
    }

    /// Reports `node`, which is not `kind` ("a map") as `what` must be: no value at all (a missing key), or a value
    /// of another shape.
    mutating func reportNot(_ kind: String, _ node: Node, _ what: String, example: String) {
        if Self.isNull(node) {
            report(.missingKey, at: node, "\(what) has no value; write \(example)")
        } else {
            report(.wrongType, at: node, "\(what) must be \(kind), not \(Self.shape(of: node)); write \(example)")
        }
    }
}
