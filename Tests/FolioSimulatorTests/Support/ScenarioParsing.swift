import FolioSimulator
import Testing

/// Shorthands for tests that read scenario text.
enum ScenarioParsing {
    /// The problems `yaml` has, or an empty list when it parses.
    static func errors(_ yaml: String, file: String = "test.yaml") -> [ScenarioError] {
        do {
            _ = try ScenarioParser.parse(yaml: yaml, file: file)
            return []
        } catch let error as ScenarioErrors {
            return error.errors
        } catch {
            Issue.record("parsing threw \(error), not ScenarioErrors")
            return []
        }
    }

    /// The one problem `yaml` has; records an issue when it has none or several.
    static func error(_ yaml: String, sourceLocation: SourceLocation = #_sourceLocation) -> ScenarioError? {
        let errors = errors(yaml)
        #expect(errors.count == 1, "expected one error, got \(errors.count): \(errors)", sourceLocation: sourceLocation)
        return errors.first
    }

    /// A scenario with three devices (iPad, Mac, Phone) and three documents, one of each model, created on lines
    /// 7–9 (Notes: text, List: records, Album: pages), followed by `steps`, which start on line 10.
    static func withDocuments(_ steps: String, top: String = "") -> String {
        """
        name: Steps
        \(top)devices:
          - name: iPad
          - name: Mac
          - name: Phone
        steps:
          - create: {device: iPad, document: Notes}
          - create: {device: iPad, document: List, model: records}
          - create: {device: iPad, document: Album, model: pages}
        \(steps)
        """
    }
}
