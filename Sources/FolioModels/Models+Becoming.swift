import FolioCore
import Foundation

// The operations that turn one state of a built-in model into another (`DocumentModel.operations(becoming:)`), which
// restoring an older version applies as an ordinary, undoable edit.

extension TextDocument {
    /// One deletion and one insertion at the stretch where the texts differ (their common beginning and end kept),
    /// or none when the texts hold the same scalars.
    ///
    /// - Complexity: O(*n*) in the texts' lengths.
    public func operations(becoming target: TextDocument) -> [Operation]? {
        guard let difference = ScalarDifference(from: text, to: target.text) else { return [] }
        var operations: [Operation] = []
        if difference.removed > 0 { operations.append(.delete(at: difference.position, count: difference.removed)) }
        if !difference.inserted.isEmpty {
            operations.append(.insert(at: difference.position, text: difference.inserted))
        }
        return operations
    }
}

extension PagesDocument {
    /// The text's stretch where it differs (deleted and inserted), then the images: removed where `target` has none
    /// of the name, put where it has other bytes or a new name (in name order by scalars).
    public func operations(becoming target: PagesDocument) -> [Operation]? {
        var operations: [Operation] = []
        if let difference = ScalarDifference(from: text, to: target.text) {
            if difference.removed > 0 {
                operations.append(.deleteText(at: difference.position, count: difference.removed))
            }
            if !difference.inserted.isEmpty {
                operations.append(.insertText(at: difference.position, text: difference.inserted))
            }
        }
        // Names compare by scalars: an image whose name `target` spells otherwise (a decomposed `é`) is removed and
        // put again under `target`'s spelling.
        func spelledAlike(_ name: String, in model: PagesDocument) -> Bool {
            model.images.keys.contains { $0.isIdentical(to: name) }
        }
        var removed: [String] = []
        for name in imageNames where !spelledAlike(name, in: target) {
            operations.append(.removeImage(name: name))
            removed.append(name)
        }
        for name in target.imageNames {
            let kept = spelledAlike(name, in: self) && !removed.contains { $0 == name }
            if !kept || images[name] != target.images[name] {
                operations.append(.putImage(name: name, bytes: target.images[name]!))
            }
        }
        return operations
    }
}

extension RecordsDocument {
    /// Records `target` lacks removed; records both hold kept where they are in `target`'s order (the others of them
    /// removed and inserted again), their fields unset or set to `target`'s; then `target`'s other records inserted
    /// at their places.
    ///
    /// - Complexity: O(*n* log *n* + *f*) for *n* records and *f* fields.
    public func operations(becoming target: RecordsDocument) -> [Operation]? {
        var targetIndex: [String: Int] = [:]
        for (index, record) in target.records.enumerated() { targetIndex[record.id] = index }
        var operations: [Operation] = []
        // The records both hold, in this document's order, by their place in `target`: those on the longest run that
        // `target` orders the same way stay; the rest move (removed now, inserted below).
        let shared = records.compactMap { record in
            targetIndex[record.id].flatMap { target.records[$0].id.isIdentical(to: record.id) ? $0 : nil }
        }
        let staying = Set(Self.longestIncreasingRun(shared))
        for record in records {
            guard let index = targetIndex[record.id], staying.contains(index) else {
                operations.append(.remove(record: record.id))
                continue
            }
            let wanted = target.records[index].fields
            for (name, _) in record.fields.sortedByScalars
            where !wanted.keys.contains(where: { $0.isIdentical(to: name) }) {
                operations.append(.unset(record: record.id, field: name))
            }
            for (name, value) in wanted.sortedByScalars {
                let current = record.fields.first { $0.key.isIdentical(to: name) }?.value
                if current.map({ !$0.isIdentical(to: value) }) ?? true {
                    operations.append(.set(record: record.id, field: name, value: value))
                }
            }
        }
        for (index, record) in target.records.enumerated() where !staying.contains(index) {
            operations.append(.insert(record: record.id, fields: record.fields, at: index))
        }
        return operations
    }

    /// The values of the longest strictly increasing subsequence of `values` (patience sorting).
    static func longestIncreasingRun(_ values: [Int]) -> [Int] {
        var tails: [Int] = []  // indexes into `values` of the smallest tail of each run length
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var run: [Int] = []
        var index = tails.last ?? -1
        while index >= 0 {
            run.append(values[index])
            index = previous[index]
        }
        return run.reversed()
    }
}
