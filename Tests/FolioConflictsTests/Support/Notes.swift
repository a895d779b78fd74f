import FolioCore
import Foundation

/// A small mergeable model for the engine's tests: a title and a set of words.
///
/// Words merge as sets (added by any version, removed by any version), so merging is the same in every order; a title
/// two versions changed differently is a merge conflict.
struct Notes: MergeableDocumentModel, Hashable {
    enum Operation: DocumentOperation {
        case add(String)
        case remove(String)
        case title(String)

        func encode(into writer: inout BinaryWriter) {
            switch self {
            case .add(let word):
                writer.write(byte: 0)
                writer.write(string: word)
            case .remove(let word):
                writer.write(byte: 1)
                writer.write(string: word)
            case .title(let title):
                writer.write(byte: 2)
                writer.write(string: title)
            }
        }

        init(from reader: inout BinaryReader) throws {
            let tag = try reader.readByte("tag")
            let text = try reader.readString("text", limit: 1 << 16)
            switch tag {
            case 0: self = .add(text)
            case 1: self = .remove(text)
            default: self = .title(text)
            }
        }
    }

    static let documentType = DocumentType(identifier: "test.notes", fileExtensions: ["notes"], isPackage: false)

    var title = ""
    var words: [String] = []

    init() {}

    init(title: String, words: [String]) {
        self.title = title
        self.words = Array(Set(words)).sorted()
    }

    init(contents: DocumentContents) throws(ModelError) {
        guard case .data(let data) = contents, let text = String(data: data, encoding: .utf8) else {
            throw ModelError(.invalidContents, "not notes")
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        title = lines[0]
        words = lines.dropFirst().filter { !$0.isEmpty }
    }

    func contents() -> DocumentContents {
        .data(Data(([title] + words).joined(separator: "\n").utf8))
    }

    mutating func apply(_ operation: Operation) throws(ModelError) -> Operation {
        switch operation {
        case .add(let word):
            guard !words.contains(word) else { throw ModelError(.invalidOperation, "\(word) is there") }
            words = (words + [word]).sorted()
            return .remove(word)
        case .remove(let word):
            guard words.contains(word) else { throw ModelError(.invalidOperation, "\(word) is not there") }
            words.removeAll { $0 == word }
            return .add(word)
        case .title(let new):
            defer { title = new }
            return .title(title)
        }
    }

    static func merge(base: Notes, versions: [Notes]) -> MergeResult<Notes> {
        let added = Set(versions.flatMap { Set($0.words).subtracting(base.words) })
        let removed = Set(versions.flatMap { Set(base.words).subtracting($0.words) })
        let words = Set(base.words).union(added).subtracting(removed)
        let titles = versions.map(\.title).filter { $0 != base.title }
        var conflicts: [MergeConflict] = []
        if Set(titles).count > 1 {
            conflicts.append(MergeConflict(location: "title", base: base.title, values: versions.map(\.title)))
        }
        let title = conflicts.isEmpty ? (titles.first ?? base.title) : versions[0].title
        return MergeResult(merged: Notes(title: title, words: Array(words)), conflicts: conflicts)
    }
}
