import Foundation

/// Why a model refused contents or an operation.
public struct ModelError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem; more kinds may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable { case invalidContents, invalidOperation }
        private let value: Value
        /// The snapshot cannot be loaded by this model (wrong form, bad encoding, missing members).
        public static let invalidContents = Code(value: .invalidContents)
        /// The operation does not apply to the current state (out of range, unknown record…); nothing changed.
        public static let invalidOperation = Code(value: .invalidOperation)
        /// The code's name.
        public var description: String { value.rawValue }
    }

    /// The kind of problem.
    public var code: Code
    /// What was wrong, as one sentence.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
