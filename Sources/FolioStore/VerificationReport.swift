import FolioCore
import Foundation

/// What ``ChangeLogStore/verify(checkingPages:)`` found.
public struct VerificationReport: Hashable, Sendable, CustomStringConvertible {
    /// One thing found wrong.
    public struct Problem: Hashable, Sendable, CustomStringConvertible {
        /// The document concerned, if any.
        public var document: DocumentID?
        /// The change concerned, if any.
        public var change: ChangeID?
        /// What is wrong.
        public var message: String

        /// `document change: message`.
        public var description: String {
            [document.map { "document \($0)" }, change.map { "change \($0)" }].compactMap { $0 }.joined(separator: " ")
                + (document == nil && change == nil ? "" : ": ") + message
        }
    }

    /// How many documents were checked.
    public var documents = 0
    /// How many changes were re-hashed and checked.
    public var changes = 0
    /// Everything found wrong, in a fixed order (document, then the log's order); empty when the store is sound.
    public var problems: [Problem] = []

    /// Whether nothing is wrong.
    public var isSound: Bool { problems.isEmpty }

    /// The first problem, the one to show a person.
    public var firstProblem: Problem? { problems.first }

    /// A one-line summary.
    public var description: String {
        func counted(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
        let scope = "\(counted(documents, "document")), \(counted(changes, "change"))"
        guard let first = firstProblem else { return "sound: \(scope)" }
        return "\(counted(problems.count, "problem")) in \(scope); first: \(first)"
    }
}

/// What ``ChangeLogStore/verify(documents:continuing:)`` found sound in one store, kept between its calls so that
/// each call checks only what was added since: per document, the changes verified (as a causal graph) and what
/// derives from them. It holds O(n) per document of n changes.
public struct VerificationProgress: Sendable {
    /// The store verified, by its URL.
    var store: URL?
    var logs: [DocumentID: VerifiedLog] = [:]

    /// Nothing verified yet.
    public init() {}

    init(store: URL) {
        self.store = store
    }

    /// The vector `document` was last found sound at; `nil` when it was not (or not yet) verified.
    public func verifiedVector(of document: DocumentID) -> VersionVector? {
        logs[document]?.vector
    }
}
