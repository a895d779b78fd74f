/// Every problem found in one scenario file, sorted by position, so that a person can fix them in one go.
///
/// ``ScenarioParser`` throws it when a file has at least one problem; it never holds none.
public struct ScenarioErrors: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problems, sorted by line, then column; problems at one position keep the order they were found in.
    public let errors: [ScenarioError]

    /// Collects `errors`, sorting them by position.
    public init(_ errors: [ScenarioError]) {
        precondition(!errors.isEmpty, "ScenarioErrors holds at least one error")
        self.errors = errors.enumerated()
            .sorted {
                ($0.element.line, $0.element.column, $0.offset) < ($1.element.line, $1.element.column, $1.offset)
            }
            .map(\.element)
    }

    /// One line per problem, in order.
    public var description: String {
        errors.map(\.description).joined(separator: "\n")
    }
}
