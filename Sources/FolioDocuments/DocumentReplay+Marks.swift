import FolioCore
import FolioMerge

extension DocumentReplay {
    /// A place marked in a version of the text: the version's heads, and positions in its text (Unicode scalars).
    struct Marks {
        var heads: [Change]
        var positions: [Int]
    }

    /// Where places marked in versions of a character-merged text stand in the text of `shown` (the heads whose merge
    /// the document shows): for each of `marks`, its positions there, or `nil` when a position is past the end of
    /// its version's text. Every mark's version must be in the past of `shown`.
    ///
    /// The graph of `shown`'s history is replayed with one more event per mark, made on the mark's heads, that types
    /// a scalar at each position; where those scalars land in the merged text is where the places went: after the
    /// scalar each followed, however much was typed or deleted around it since (``TextEventGraph/mergedPositions(of:)``).
    ///
    /// - Throws: ``DocumentError`` as ``graphState(from:read:)`` does; `.invalidOperation` when the model does not
    ///   merge character by character.
    func markedPositions(_ marks: [Marks], in shown: [Change]) throws(DocumentError) -> [[Int]?] {
        guard let type = Model.self as? any CharacterMergeable.Type else {
            throw DocumentError(.invalidOperation, "this document's model does not merge character by character")
        }
        return try markedPositions(type, marks, in: shown)
    }

    private func markedPositions<M: CharacterMergeable>(_ type: M.Type, _ marks: [Marks], in shown: [Change])
        throws(DocumentError) -> [[Int]?]
    {
        var heads = shown
        var included = Set(shown.map(\.hash))
        for mark in marks {
            for head in mark.heads where included.insert(head.hash).inserted { heads.append(head) }
        }
        var replayed = try replayGraph(type, from: heads, read: nil)
        // The marks sort before every change (the smallest agent): one placed where another device typed later at
        // the same place stays before what was typed, after the scalar it followed.
        let agent = ChangeID(device: DeviceID(UUIDBytes(high: 0, low: 0)), seq: 1)
        // Every mark event added is a mark, even one whose positions were partly past its text: its scalars that did
        // land must take no room in the others' places.
        var events: [(event: Int, complete: Bool)?] = []
        for mark in marks {
            let parents = mark.heads.compactMap { replayed.headEvents[$0.hash] ?? nil }
            let edits = mark.positions.sorted(by: >).map { TextEdit.insert(at: $0, scalars: ["\u{FFFC}"]) }
            let skipped = replayed.graph.skippedEdits
            let event = try? replayed.graph.add(agent: agent, parents: parents, edits: edits)
            events.append(event.map { ($0, replayed.graph.skippedEdits == skipped) })
        }
        let found = replayed.graph.mergedPositions(of: events.compactMap { $0?.event })
        var next = found.makeIterator()
        return zip(marks, events).map { mark, event in
            guard let event else { return nil }
            let positions = next.next()
            guard event.complete, let positions, positions.count == mark.positions.count else { return nil }
            return positions
        }
    }
}
