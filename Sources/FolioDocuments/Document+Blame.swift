import FolioCore
import FolioMerge
import FolioStore

/// A stretch of a text typed by one change: who wrote which characters (``Document/blame()``).
public struct TextAuthorship: Hashable, Sendable {
    /// Where the stretch is in the text, in Unicode scalars.
    public var range: Range<Int>
    /// The change that typed it: an edit, or the baseline or resolution whose contents brought it (a document created
    /// or imported with contents, a file changed by another program, a conflict settled with new contents: each is
    /// credited only with the stretch it changed, between what its text and the one before it begin and end with). Its `device` is who wrote it. `nil` only when the replay started from
    /// a state no change names.
    public var change: ChangeID?

    /// A stretch typed by `change`.
    public init(range: Range<Int>, change: ChangeID?) {
        self.range = range
        self.change = change
    }
}

extension Document {
    /// Who wrote each character of the text the document shows: stretches of the text in order, each with the
    /// change that typed it, from the character merge of the whole history (every edit at the position its author
    /// saw, as merges place it). The open group is committed first, so the text is the model's. For a model that
    /// merges character by character (a text, a pages document's text).
    ///
    /// - Complexity: a replay of the document's whole history (not from a checkpoint, which does not say who typed
    ///   what).
    /// - Throws: ``DocumentError`` `.invalidOperation` for a model that does not merge character by character,
    ///   `.store`.
    public func blame() throws(DocumentError) -> [TextAuthorship] {
        try ensureOpen()
        try commit()
        return try authorshipOfShownHeads()
    }

    /// ``blame()`` for a report: each stretch of the text the document shows with the change that typed it, without
    /// committing the open group. `nil` when the document has edits not yet committed, is closed, has a model that
    /// does not merge character by character, or when the merge of its heads is not the text it shows (then a
    /// report says nothing of authorship rather than something wrong).
    ///
    /// - Throws: ``DocumentError`` `.store`, or `.notFound` when a version the document shows merged is not in the log.
    package func blameOfCommittedText() throws(DocumentError) -> [(text: String, change: ChangeID?)]? {
        guard !state.contains(.closed), !editing.hasOpenGroup, let shown = model as? any CharacterMergeable else {
            return nil
        }
        let heads = try headsOfShownText()
        let replay = DocumentReplay<Model>(store: library.store, document: id, decoded: tracking.decodedOperations)
        let (stretches, text) = try replay.authorshipAndText(of: heads)
        let scalars = shown.mergeableText
        guard text.unicodeScalars.elementsEqual(scalars) else { return nil }
        return stretches.map { stretch in
            var piece = String.UnicodeScalarView()
            piece.append(contentsOf: scalars[stretch.range])
            return (String(piece), stretch.change)
        }
    }

    private func authorshipOfShownHeads() throws(DocumentError) -> [TextAuthorship] {
        let heads = try headsOfShownText()
        let replay = DocumentReplay<Model>(store: library.store, document: id, decoded: tracking.decodedOperations)
        return try replay.authorship(of: heads)
    }
}

extension Document {
    /// The heads whose merge is the text the document shows.
    private func headsOfShownText() throws(DocumentError) -> [Change] {
        let heads = shownHeads()
        guard heads.count == 1 + (tracking.mergeShown(at: head.hash)?.others.count ?? 0) else {
            throw DocumentError(.notFound, "a version the document shows merged is not in the log")
        }
        return heads
    }
}

extension DocumentReplay {
    /// Who typed each character of the character merge of `heads`, replayed from the start of the history.
    func authorship(of heads: [Change]) throws(DocumentError) -> [TextAuthorship] {
        try authorshipAndText(of: heads).stretches
    }

    /// ``authorship(of:)``, with the merged text the stretches cover.
    func authorshipAndText(of heads: [Change]) throws(DocumentError) -> (stretches: [TextAuthorship], text: String) {
        guard let type = Model.self as? any CharacterMergeable.Type else {
            throw DocumentError(.invalidOperation, "this document's model does not merge character by character")
        }
        return try authorship(type, of: heads)
    }

    private func authorship<M: CharacterMergeable>(_ type: M.Type, of heads: [Change]) throws(DocumentError)
        -> (stretches: [TextAuthorship], text: String)
    {
        var limit = VersionVector()
        for head in heads { limit.merge(head.vector) }
        // No checkpoint, and through changes whose contents replace the text: back to the document's first change,
        // so that such a change is credited only with what it changed, whatever else was typed concurrently.
        let tail = try changes(since: VersionVector(), within: limit)
        let replayed = try replayGraph(type, from: heads, read: (checkpoint: nil, tail: tail), throughResets: true)
        var result: [TextAuthorship] = []
        var position = 0
        for run in replayed.graph.typists() {
            let change = run.agent ?? replayed.baseChange
            if let last = result.last, last.change == change {
                result[result.count - 1].range = last.range.lowerBound..<(position + run.count)
            } else {
                result.append(TextAuthorship(range: position..<(position + run.count), change: change))
            }
            position += run.count
        }
        return (result, replayed.graph.text)
    }
}
