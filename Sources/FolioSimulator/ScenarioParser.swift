import Foundation
import Yams

/// Reads scenario files (`docs/scenarios.md`) into ``Scenario`` values, strictly.
///
/// A file is either read whole or refused whole: every problem in it (malformed YAML, unknown keys, missing keys,
/// values of the wrong type, bad durations, unknown devices, documents used before any step creates them,
/// operations of another model, repeated names) is reported with its line and column and a message that says what
/// to write instead, sorted by position, so that one run shows everything to fix. Nothing of a refused file is
/// run.
public enum ScenarioParser {
    /// The largest scenario file read: 16 MiB.
    public static let maximumFileBytes = 16 << 20

    /// Reads a scenario from YAML text.
    ///
    /// - Parameters:
    ///   - yaml: the file's text; a byte order mark at its start is ignored.
    ///   - file: the file's name as errors should show it, such as `Scenarios/offline.yaml`.
    /// - Returns: the scenario, with each step's line in `yaml`.
    /// - Complexity: O(*n*) in the size of `yaml`, plus O(devices) per name lookup.
    /// - Throws: ``ScenarioErrors`` with every problem found, sorted by line.
    public static func parse(yaml: String, file: String) throws -> Scenario {
        try Self.parseYAML(yaml: yaml, file: file)
    }

    /// The typed core of ``parse(yaml:file:)``, for the module's own code.
    static func parseYAML(yaml: String, file: String) throws(ScenarioErrors) -> Scenario {
        // YAML allows a byte order mark at the start of a file (Windows editors write one); libyaml, given text,
        // would take it for content.
        if yaml.unicodeScalars.first == "\u{FEFF}" {
            return try parseYAML(yaml: String(yaml.unicodeScalars.dropFirst()), file: file)
        }
        guard yaml.utf8.count <= maximumFileBytes else {
            throw ScenarioErrors([
                ScenarioError(
                    .malformedYAML, file: file, line: 1, column: 1,
                    "the file has \(yaml.utf8.count) bytes, more than a scenario may (\(maximumFileBytes)); "
                        + "split it into several scenarios")
            ])
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml, .default, .default, .utf8)
        } catch {
            throw ScenarioErrors([YAMLProblem.error(for: error, yaml: yaml, file: file)])
        }
        var reader = ScenarioReader(file: file, source: yaml)
        let scenario = reader.readScenario(root)
        guard reader.errors.isEmpty, let scenario else {
            precondition(!reader.errors.isEmpty, "the scenario reader refused a file without saying why")
            throw ScenarioErrors(reader.errors)
        }
        return scenario
    }

    /// Reads a scenario from a file's bytes, which must be UTF-8.
    ///
    /// - Throws: ``ScenarioErrors``: the bytes are not UTF-8 (with the line of the first bad byte), the file is
    ///   too large, or any problem ``parse(yaml:file:)`` reports.
    public static func parse(data: Data, file: String) throws -> Scenario {
        guard data.count <= maximumFileBytes else {
            throw ScenarioErrors([
                ScenarioError(
                    .malformedYAML, file: file, line: 1, column: 1,
                    "the file has \(data.count) bytes, more than a scenario may (\(maximumFileBytes)); "
                        + "split it into several scenarios")
            ])
        }
        guard let yaml = String(validating: data, as: UTF8.self) else {
            let line = YAMLProblem.lineOfFirstInvalidUTF8(in: data)
            throw ScenarioErrors([
                ScenarioError(
                    .malformedYAML, file: file, line: line, column: 1,
                    "the file is not UTF-8 text; save it as UTF-8")
            ])
        }
        return try parseYAML(yaml: yaml, file: file)
    }
}
