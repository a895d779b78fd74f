import Foundation
import Yams

/// Translates Yams' errors into ``ScenarioError``s at the position Yams gives, with a hint about what to write.
enum YAMLProblem {
    /// The scenario error for an error thrown by `Yams.compose`.
    static func error(for error: any Error, yaml: String, file: String) -> ScenarioError {
        func make(_ mark: Mark?, _ message: String) -> ScenarioError {
            ScenarioError(.malformedYAML, file: file, line: mark?.line ?? 1, column: mark?.column ?? 1, message)
        }
        func make(_ position: (line: Int, column: Int), _ message: String) -> ScenarioError {
            ScenarioError(.malformedYAML, file: file, line: position.line, column: position.column, message)
        }
        guard let error = error as? YamlError else {
            return make(nil, "the file cannot be read as YAML (\(error)); check its quoting and indentation")
        }
        switch error {
        case .scanner(let context, let problem, let mark, _),
            .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            var message = "the file is not valid YAML: "
            if let context {
                message += context.text
                if context.mark.line != mark.line { message += " (from line \(context.mark.line))" }
                message += ", "
            }
            message += problem + "; " + hint(for: problem, context: context?.text, at: mark, in: yaml)
            return make(mark, message)
        case .duplicatedKeysInMapping(let duplicates, let context):
            // Yams points at the map; the repeat is what to fix, so point at it when the text shows where it is.
            let places = duplicates.count == 1 ? blockKeyPlaces(of: duplicates[0], inMapAt: context.mark, in: yaml) : []
            if places.count > 1 {
                return make(
                    places[1],
                    "'\(duplicates[0])' is given twice in one map (first at line \(places[0].line)); keep one")
            }
            let keys = NameSuggestion.list(duplicates)
            let verb = duplicates.count == 1 ? "is" : "are"
            return make(context.mark, "\(keys) \(verb) given twice in one map; keep one of each")
        case .reader(let problem, let offset, _, _):
            let place = offset.map { position(ofCharacter: $0, in: yaml) } ?? (1, 1)
            return make(
                place,
                "the file cannot be read as YAML: \(problem); remove the character, or write it as an "
                    + "escape inside double quotes, such as \"\\u0001\"")
        default:
            return make(nil, "the file cannot be read as YAML (\(error)); check its quoting and indentation")
        }
    }

    /// What to write instead, for libyaml's most common complaints.
    private static func hint(for problem: String, context: String?, at mark: Mark, in yaml: String) -> String {
        let context = context ?? ""
        if problem.contains("mapping values are not allowed") {
            return "quote a value that contains ': ', as in text: \"a: b\"; otherwise check the indentation"
        }
        if problem.contains("cannot start any token") || problem.contains("tab") {
            if character(at: mark, in: yaml) == "\t" || problem.contains("tab") {
                return "indent with spaces, not tabs"
            }
            return "quote a value that starts with @ or `, as in text: \"@home\""
        }
        if problem.contains("block sequence entries are not allowed"), character(at: mark, in: yaml) == "-" {
            return
                "a value that starts with '- ' after its key reads as a list item; quote it, as in text: \"- milk\", "
                + "or start the list on the next line"
        }
        if problem.contains("undefined alias") {
            return "quote a value that starts with *, as in text: \"*note\""
        }
        if problem.contains("another document") {
            return
                "a scenario file holds one YAML document; remove the '---' line, or move what follows to its own file"
        }
        if context.contains("quoted scalar") {
            return "close the quote that starts there"
        }
        if context.contains("flow") || problem.contains("',' or ']'") || problem.contains("',' or '}'") {
            return "close the [ or { that starts there, and separate items with ', '"
        }
        return "check the indentation: the keys of one map start in the same column, and each list item starts "
            + "with '- '"
    }

    /// Where the block map that starts at `mark` gives `key` (unquoted, in the map's own column), in order; fewer
    /// than two places when the text does not show the repeat that way (a flow map `{…}`, a quoted key).
    private static func blockKeyPlaces(of key: String, inMapAt mark: Mark, in yaml: String) -> [(
        line: Int, column: Int
    )] {
        let lines = yaml.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map {
            Array($0.unicodeScalars)
        }
        let column = mark.column - 1
        let keyScalars = Array(key.unicodeScalars)
        guard mark.line >= 1, mark.line <= lines.count, !keyScalars.isEmpty else { return [] }
        var places: [(line: Int, column: Int)] = []
        for index in (mark.line - 1)..<lines.count {
            let line = lines[index]
            let indent = line.prefix { $0 == " " }.count
            let isContent = indent < line.count && line[indent] != "#"
            // A later line that starts left of the map's keys ends the map.
            if index > mark.line - 1, isContent, indent < column { break }
            guard indent == column || index == mark.line - 1, line.count > column + keyScalars.count,
                Array(line[column..<(column + keyScalars.count)]) == keyScalars
            else { continue }
            let rest = line[(column + keyScalars.count)...].drop { $0 == " " }
            if rest.first == ":" { places.append((index + 1, column + 1)) }
        }
        return places
    }

    /// The character at `mark`, if the text has one there.
    private static func character(at mark: Mark, in yaml: String) -> Character? {
        let lines = yaml.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        guard mark.line >= 1, mark.line <= lines.count else { return nil }
        let scalars = lines[mark.line - 1].unicodeScalars
        guard mark.column >= 1, mark.column <= scalars.count else { return nil }
        return Character(scalars[scalars.index(scalars.startIndex, offsetBy: mark.column - 1)])
    }

    /// The line and column of the character at `offset` (in characters) of `text`.
    private static func position(ofCharacter offset: Int, in text: String) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for character in text.prefix(offset) {
            if character.isNewline {
                line += 1
                column = 1
            } else {
                column += character.unicodeScalars.count
            }
        }
        return (line, column)
    }

    /// The 1-based line holding the first byte of `data` that is not valid UTF-8.
    static func lineOfFirstInvalidUTF8(in data: Data) -> Int {
        var parser = Unicode.UTF8.ForwardParser()
        var bytes = data.makeIterator()
        var line = 1
        while true {
            switch parser.parseScalar(from: &bytes) {
            case .valid(let encoded):
                if encoded.count == 1, encoded.first == 0x0A { line += 1 }
            case .emptyInput, .error:
                return line
            }
        }
    }
}
