import FolioCore
import Foundation

/// A plain-text document, saved as a flat UTF-8 file.
///
/// The text lives in a ``TextStorage`` gap buffer, so a long history of local keystrokes replays in time proportional
/// to the keystrokes, not to the text's length times their number. Positions count Unicode scalars. Equality compares
/// the scalars exactly (not by canonical equivalence), because that is what the snapshot and the positions see.
public struct TextDocument: DocumentModel, Hashable, Sendable {
    /// Plain text (`com.folio.text`, conforming to `public.plain-text`), extension `txt`, a flat file.
    public static let documentType = DocumentType.text

    /// The scalars.
    public private(set) var storage: TextStorage

    /// An empty text.
    public init() {
        storage = TextStorage()
    }

    /// A document holding `text`.
    ///
    /// - Complexity: O(*n*).
    public init(text: String) {
        storage = TextStorage(text)
    }

    /// Loads a flat file of UTF-8 text, kept byte for byte (a byte order mark stays part of the text).
    ///
    /// - Throws: `ModelError` `invalidContents` for a package or bytes that are not UTF-8.
    public init(contents: DocumentContents) throws {
        guard case .data(let data) = contents else {
            throw ModelError(.invalidContents, "a text document is a flat file, not a package")
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw ModelError(.invalidContents, "the text document's \(data.count) bytes are not valid UTF-8")
        }
        storage = TextStorage(text)
    }

    /// The text.
    ///
    /// - Complexity: O(*n*): it is assembled from the storage on each access.
    public var text: String { storage.string }

    /// The number of Unicode scalars: the largest valid insertion position.
    ///
    /// - Complexity: O(1).
    public var scalarCount: Int { storage.count }

    /// The text's UTF-8 bytes.
    ///
    /// - Complexity: O(*n*).
    public func contents() -> DocumentContents {
        .data(Data(text.utf8))
    }

    /// Applies one edit and returns the edit that undoes it.
    ///
    /// Inverses: `insert` → `delete` of what was inserted; `delete` → `insert` of the removed text; `append` →
    /// `delete` at the old end; `replace` → `replace` with the old text.
    ///
    /// - Complexity: O(*m* + *d*) for `insert`, `delete` and `append` (*m* scalars edited, *d* the distance from the
    ///   previous edit), O(*n*) for `replace`.
    /// - Throws: `ModelError` `invalidOperation` when a position or count is negative or past the end; the text is
    ///   then unchanged.
    public mutating func apply(_ operation: Operation) throws -> Operation {
        let length = storage.count
        switch operation {
        case .insert(let position, let text):
            return .delete(at: position, count: try storage.insertChecked(text, at: position))
        case .delete(let position, let count):
            return .insert(at: position, text: try storage.removeChecked(count, at: position))
        case .append(let text):
            let inserted = storage.insert(text, at: length)
            return .delete(at: length, count: inserted)
        case .replace(let text):
            let old = storage.string
            storage.replaceAll(with: text)
            return .replace(old)
        }
    }

    /// Applies `operations` in order as ``apply(_:)`` does, skipping those that do not apply, without making their
    /// inverses (a deletion's removed text is not read). Returns how many were skipped.
    ///
    /// - Complexity: as ``apply(_:)`` for each operation.
    public mutating func applyReplayed(_ operations: [Operation]) -> Int {
        var skipped = 0
        for operation in operations {
            let length = storage.count
            switch operation {
            case .insert(let position, let text):
                guard position >= 0, position <= length else {
                    skipped += 1
                    continue
                }
                storage.insert(text, at: position)
            case .delete(let position, let count):
                guard position >= 0, count >= 0, position <= length, count <= length - position else {
                    skipped += 1
                    continue
                }
                storage.discard(position..<(position + count))
            case .append(let text):
                storage.insert(text, at: length)
            case .replace(let text):
                storage.replaceAll(with: text)
            }
        }
        return skipped
    }

    /// `operations` combined as ``combine(_:_:)`` combines each with the one before, in one pass: a run of typing is
    /// appended to in place and its length counted once per operation, so a group of *n* keystrokes combines in
    /// O(*n*) rather than copying and counting the text typed so far at each keystroke.
    public static func combined(_ operations: [Operation]) -> [Operation] {
        var result: [Operation] = []
        result.reserveCapacity(operations.count)
        // The newest operation, while later ones may extend it: typing `text` (`count` scalars) at `position`, or
        // deleting `count` scalars at `position`.
        var typing = false
        var deleting = false
        var position = 0
        var count = 0
        var text = ""
        for operation in operations {
            switch operation {
            case .insert(let q, let t) where typing && position >= 0 && q >= 0 && q - position == count:
                text.append(t)
                count += t.unicodeScalars.count
                continue
            case .delete(let q, let m) where deleting && position >= 0 && count >= 0 && m >= 0 && q >= 0:
                let (total, overflow) = count.addingReportingOverflow(m)
                if !overflow && q == position {
                    count = total
                    continue
                }
                if !overflow && q == position - m {
                    (position, count) = (q, total)
                    continue
                }
            default:
                break
            }
            if typing { result.append(.insert(at: position, text: text)) }
            if deleting { result.append(.delete(at: position, count: count)) }
            (typing, deleting) = (false, false)
            switch operation {
            case .insert(let q, let t):
                (typing, position, text, count) = (true, q, t, t.unicodeScalars.count)
            case .delete(let q, let m):
                (deleting, position, count) = (true, q, m)
            case .append, .replace:
                result.append(operation)
            }
        }
        if typing { result.append(.insert(at: position, text: text)) }
        if deleting { result.append(.delete(at: position, count: count)) }
        return result
    }

    /// Combines consecutive typing and deleting into one edit, so a burst of keystrokes becomes one operation.
    ///
    /// - `insert(at: p, s)` then `insert(at: p + |s|, t)` → `insert(at: p, s + t)` (typing on);
    /// - `delete(at: p, n)` then `delete(at: p - m, m)` → `delete(at: p - m, n + m)` (backspacing);
    /// - `delete(at: p, n)` then `delete(at: p, m)` → `delete(at: p, n + m)` (forward deleting).
    ///
    /// The result applies exactly when both do, with the same effect. Any other pair gives `nil`.
    public static func combine(_ first: Operation, _ second: Operation) -> Operation? {
        switch (first, second) {
        case (.insert(let p, let s), .insert(let q, let t)):
            guard p >= 0, q >= 0, q - p == s.unicodeScalars.count else { return nil }
            return .insert(at: p, text: s + t)
        case (.delete(let p, let n), .delete(let q, let m)):
            guard p >= 0, n >= 0, m >= 0, q >= 0 else { return nil }
            let (total, overflow) = n.addingReportingOverflow(m)
            guard !overflow else { return nil }
            if q == p { return .delete(at: p, count: total) }
            if q == p - m { return .delete(at: q, count: total) }
            return nil
        default:
            return nil
        }
    }
}
