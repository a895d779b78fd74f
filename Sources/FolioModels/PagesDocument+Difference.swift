import FolioMerge
import Foundation

extension PagesDocument {
    /// How a version of a pages document differs from its ancestor, member by member.
    public struct Difference: Hashable, Sendable, CustomStringConvertible {
        /// The text's changes, line by line.
        public var text: TextDiff
        /// The images added, removed or replaced, sorted by name (by Unicode scalars).
        public var images: [FieldChange<Data>]

        /// Creates a difference.
        public init(text: TextDiff, images: [FieldChange<Data>]) {
            self.text = text
            self.images = images
        }

        /// Whether the text and the images are the same.
        public var isEmpty: Bool { text.isEmpty && images.isEmpty }

        /// One line per change: the text's first, then the images', such as `text.txt: deleted line 3` and
        /// `images/cover.png: replaced 12 bytes, sha256 … with 14 bytes, sha256 …`.
        public var summary: [String] {
            text.summary.map { "\(PagesDocument.textMember): \($0)" }
                + images.map { change in
                    let location = "\(PagesDocument.imagesMember)/\(change.key)"
                    switch (change.base, change.version) {
                    case (nil, let new?): return "\(location): added (\(imageSummary(new)))"
                    case (let old?, nil): return "\(location): removed (was \(imageSummary(old)))"
                    case (let old?, let new?):
                        return "\(location): replaced \(imageSummary(old)) with \(imageSummary(new))"
                    case (nil, nil): preconditionFailure("a field change has a value on at least one side")
                    }
                }
        }

        /// The summary on one line, or `no changes`.
        public var description: String { isEmpty ? "no changes" : summary.joined(separator: "; ") }
    }
}
