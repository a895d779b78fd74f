import FolioConflicts
import FolioCore
import FolioStore
import Foundation

/// The replay of a long line of history as it streams from the log (`ChangeLogStore.streamChanges`): forward, from a
/// checkpoint or from the document's first change, one running state at a time, so that a document opened with no
/// checkpoint after a long history (a bulk import, a first sync) holds a batch of changes and its model, not the
/// history.
///
/// The changes come in causal order. While each one's primary parent (`PrimaryParentRule`) is the change before it
/// (the tip), the history up to it is one line, and the state at it is the tip's with its operations applied, as the
/// replay along primary parents from the head finds it: a baseline or a resolution with contents the model accepts
/// sets the state outright (and what was skipped or refused before it no longer counts), one whose contents it
/// refuses applies nothing and is noted, an operation that does not decode or apply is skipped and counted. When the
/// line ends at the head, its state is the state at the head.
///
/// When the history stops being one line (a change made on an older change than the tip, a merge, a merge computed
/// from the change graph), the stream stops. The state at the head is then the replay along primary parents from the
/// head down to the tip, whose state is known, when the head's line passes through it; otherwise the replay that reads
/// the whole tail (``DocumentReplay/state(at:)`` without streaming) computes it.
extension DocumentReplay {
    /// What a change does to the running state of a streamed replay.
    private enum Reset {
        /// It applies its operations, if any (an edit, a lifecycle change, a resolution without contents).
        case none
        /// It sets the state outright.
        case state(Model)
        /// It carries contents the model refuses: it applies nothing.
        case refused
    }

    /// The state at the tip of a streamed line: the change (`nil` before the first change), and the state at it
    /// (`model`, once `loaded`: a checkpoint's contents are loaded when a change first applies onto them), with what
    /// its replay skipped and refused (oldest first) since its last reset.
    private struct Tip {
        var change: Change?
        var model: Model
        var loaded: Bool
        var skipped = 0
        var refused: [ChangeHash] = []
    }

    /// The state at `head` replayed forward as the log streams the changes after `checkpoint` (or all of them), when
    /// ``streaming`` is set and at least its minimum of changes are to be read; `nil` when the replay is left to the
    /// replay along primary parents (fewer changes, or the history is not one line and the head's line does not pass
    /// through the tip reached). `refused` holds `head` when the model refused its contents.
    ///
    /// - Throws: ``DocumentError`` `.store` when the log cannot be read, `.invalidContents` when the checkpoint is the
    ///   state at the head and cannot be loaded.
    func streamedState(at head: Change, from checkpoint: Checkpoint?, refused: [ChangeHash]) throws(DocumentError)
        -> Outcome?
    {
        guard let streaming else { return nil }
        // Decided by the vectors alone, so that a replay of a few changes (an open from a recent checkpoint) costs
        // nothing more.
        let headCount = head.vector.changeCount
        let checkpointCount = checkpoint?.vector.changeCount ?? 0
        guard headCount >= checkpointCount, headCount - checkpointCount >= UInt64(max(streaming.minimum, 0)) else {
            return nil
        }
        // The checkpoint's own change: the state at it is the checkpoint's. A checkpoint of several heads joined has
        // none: the replay along primary parents passes it by too (another line), and replays from the first change.
        let start = checkpoint.flatMap { checkpointChange($0, streaming: streaming) }
        let since = start != nil ? checkpoint?.vector ?? VersionVector() : VersionVector()

        // From the first change, the state before it is the empty model's.
        var tip = Tip(change: start?.change, model: Model(), loaded: start == nil)
        var stopped = false
        var batches = 0
        let finished: Bool
        do {
            finished = try store.streamChanges(
                of: document, since: since, within: head.vector, batch: ChangeLogStore.streamBatch,
                cachingSegmentsUpTo: streaming.cachedSegments
            ) { batch in
                batches += 1
                stopped = !advance(&tip, by: batch, checkpoint: start?.contents, refused: refused)
                return !stopped
            }
        } catch {
            // A layout the stream does not read (segments that fold a device's changes out of order), or a log
            // that cannot be read: the replay that reads the whole tail reads it, or says what is wrong.
            return nil
        }
        guard let reached = tip.change else { return nil }
        if finished, !stopped, reached.hash == head.hash {
            // No change after the checkpoint: its contents are the state (and must load, as for any replay).
            if !tip.loaded, let start {
                tip.model = try load(start.contents)
            }
            return Outcome(
                model: tip.model, skippedOperations: tip.skipped, refusedContents: tip.refused.reversed(),
                reading: .streamed(batches: batches))
        }
        // A walk that fails (a parent missing from the log, say) is left to the replay that reads the whole tail, which
        // says what is wrong.
        guard
            var outcome = try? line(to: head, from: reached, at: tip, checkpoint: start?.contents, refused: refused)
        else { return nil }
        outcome.reading = .streamedThenLine(batches: batches)
        return outcome
    }

    /// The change whose state `checkpoint` holds: the one whose vector is the checkpoint's, found by identity among
    /// the latest changes of its vector (`nil` when none is, or the log cannot be read), with the checkpoint's contents.
    /// Each is read as a stream of that one change, so that a folded log's segments are decoded one at a time up to
    /// it rather than kept in the segment cache (a lookup by identity keeps them).
    private func checkpointChange(_ checkpoint: Checkpoint, streaming: Streaming) -> (change: Change, contents: Data)? {
        let entries = checkpoint.vector.entries
        for entry in entries {
            let id = ChangeID(device: entry.device, seq: entry.seq)
            let before = VersionVector(
                entries.map { ($0.device, $0.device == entry.device ? $0.seq - 1 : $0.seq) })
            var found: Change?
            _ = try? store.streamChanges(
                of: document, since: before, within: checkpoint.vector, batch: 1,
                cachingSegmentsUpTo: streaming.cachedSegments
            ) { batch in
                found = batch.first { $0.id == id }
                return found == nil
            }
            if let found, found.vector == checkpoint.vector { return (found, checkpoint.contents) }
        }
        return nil
    }

    /// Advances `tip` by the changes of `batch`, the next ones in causal order; `false` when the history stops being
    /// one line at one of them (or the checkpoint the tip stands for cannot be loaded), `tip` then standing at the
    /// change before it.
    private func advance(_ tip: inout Tip, by batch: [Change], checkpoint: Data?, refused headRefused: [ChangeHash])
        -> Bool
    {
        for change in batch {
            // Most changes are edits made on the one before: nothing else to decide.
            if case .edit(let edit) = change.kind, change.parents.count == 1, let previous = tip.change,
                change.parents[0] == previous.hash, tip.loaded
            {
                if let operations = self.operations(of: edit, in: change, as: Model.Operation.self) {
                    tip.skipped += tip.model.applyReplayed(operations)
                } else {
                    tip.skipped += 1
                }
                tip.change = change
                continue
            }
            guard advance(&tip, by: change, checkpoint: checkpoint, refused: headRefused) else { return false }
        }
        return true
    }

    /// Advances `tip` by `change`, the next change in causal order; `false` when the history stops being one line
    /// there (or the checkpoint the tip stands for cannot be loaded), leaving `tip` as it was.
    private func advance(_ tip: inout Tip, by change: Change, checkpoint: Data?, refused headRefused: [ChangeHash])
        -> Bool
    {
        if isGraphMerge(change) { return false }
        let reset = reset(at: change, refused: headRefused)
        if case .state(let model) = reset {
            // Its own state: nothing before it counts, whatever it was made on.
            tip = Tip(change: change, model: model, loaded: true)
            return true
        }
        guard isMadeOnTip(change, tip: tip.change) else { return false }
        if !tip.loaded {
            guard let checkpoint, let model = try? load(checkpoint) else { return false }
            tip.model = model
            tip.loaded = true
        }
        if case .refused = reset { tip.refused.append(change.hash) }
        if case .edit(let edit) = change.kind {
            if let operations = self.operations(of: edit, in: change, as: Model.Operation.self) {
                tip.skipped += tip.model.applyReplayed(operations)
            } else {
                tip.skipped += 1
            }
        }
        tip.change = change
        return true
    }

    /// Whether the primary parent of `change` is `tip` (for no tip: whether `change` is a root).
    private func isMadeOnTip(_ change: Change, tip: Change?) -> Bool {
        guard let tip else { return change.parents.isEmpty }
        if change.parents.count == 1 { return change.parents[0] == tip.hash }
        // A resolution that kept the tip alone among several parents starts from it; any other change made on
        // several parents has a parent the line does not hold, which the rule cannot find.
        let rule = PrimaryParentRule<Never> { $0 == tip.hash ? tip : nil }
        if case .parent(let parent) = rule.primaryParent(of: change) { return parent.hash == tip.hash }
        return false
    }

    /// What `change` does to the running state (``Reset``); `refused` holds changes already known to be refused.
    private func reset(at change: Change, refused: [ChangeHash]) -> Reset {
        switch change.kind {
        case .baseline: break
        case .resolution(let resolution) where resolution.contents != nil: break
        case .edit, .lifecycle, .resolution: return .none
        }
        if refused.contains(change.hash) { return .refused }
        var found: [ChangeHash] = []
        return resetState(at: change, refused: &found).map { .state($0) } ?? .refused
    }

    /// The state at `head` from the tip of a streamed line (`reached`, its state in `tip`), when the head's line passes
    /// through it, or meets a reset on the way: the replay along primary parents from the head, down to the tip.
    /// `nil` otherwise, or when the line meets a merge computed from the change graph.
    private func line(
        to head: Change, from reached: Change, at tip: Tip, checkpoint: Data?, refused headRefused: [ChangeHash]
    ) throws(DocumentError) -> Outcome? {
        guard reached.vector.isContained(in: head.vector) else { return nil }
        let tail = try changes(since: reached.vector, within: head.vector)
        let rule = PrimaryParentRule<DocumentError> { [self] hash throws(DocumentError) in
            if let found = tail[hash] { return found }
            if hash == reached.hash { return reached }
            do { return try store.change(hash, of: document) } catch { throw .store(error, "reading the log") }
        }
        var refused = headRefused
        let chain: [Change]
        switch try walkBack(from: head, to: reached, by: rule, refused: &refused) {
        case nil: return nil
        case .reset(let outcome)?: return outcome
        case .reached(let walked)?: chain = walked
        }
        var model = tip.model
        if !tip.loaded {
            guard let checkpoint, let loaded = try? load(checkpoint) else { return nil }
            model = loaded
        }
        var outcome = apply(chain, onto: model, refused: refused + tip.refused.reversed())
        outcome.skippedOperations += tip.skipped
        return outcome
    }
}
