import FolioConflicts
import FolioCore
import FolioStore
import Foundation

/// Rebuilds a model from the log: the state at a head, from the best checkpoint plus the changes after it.
///
/// The state at a change is the state at its primary parent (`PrimaryParentRule`) with the change's operations applied,
/// so following primary parents from a head traces one line of history, and replaying that line gives the same
/// state on every device. A baseline, or a resolution with contents, sets the state outright.
///
/// Contents come from peers, so the model may refuse them (bytes that are not contents, or contents of another
/// kind): a baseline or a resolution whose contents the model refuses is read as carrying none, like a change that
/// only renamed the document, so the state at it is its primary parent's. Operations that do not decode or apply
/// are skipped likewise. Both are decided by the change alone, so every device reads them the same way, and a
/// document never becomes unopenable because of what one change holds.
///
/// A replay with ``streaming`` set (the open of a document) replays a long line of history forward as the log streams
/// it, a batch at a time (DocumentReplay+Stream.swift), with the same outcome.
struct DocumentReplay<Model: DocumentModel> {
    let store: ChangeLogStore
    let document: DocumentID
    /// Where decoded operation groups are kept between replays, if anywhere.
    var decoded: DecodedOperations? = nil
    /// States the caller knows already, by change (an open document's heads and the versions it showed lately): a
    /// replay from the change graph starts from the latest of them that every later change descends from, as it
    /// does from a checkpoint, rather than from the log's latest checkpoint.
    var known: [ChangeHash: (vector: VersionVector, model: Model)] = [:]
    /// When set, a replay from a checkpoint or from the first change that reads many changes streams them from the
    /// log while the history is one line (``streamedState(at:from:refused:)``), holding a batch of changes at a time
    /// rather than all of them: what the open of a document does.
    var streaming: Streaming? = nil
    /// When set, a replay from the change graph also gives the states at a few points it passed that every later
    /// change descends from (``Outcome/passedStates``): an open document that keeps them replays what arrives next
    /// from there, not from its checkpoint.
    var notesPassedStates = false

    /// When a replay streams the changes it reads (``streaming``).
    struct Streaming {
        /// How many changes after the checkpoint (or from the first change) a replay must read to stream them.
        var minimum = 4_096
        /// How many changes a document's segments may hold for the stream to read them through the store's segment
        /// cache (`ChangeLogStore.streamChanges`); a longer history's are decoded one at a time and not kept.
        var cachedSegments = ChangeLogStore.streamedSegmentsCached
    }

    /// The operations of `edit`, the edit of `change`, decoded (once per change when ``decoded`` keeps them);
    /// `nil` when they do not decode.
    func operations<Operation: DocumentOperation>(of edit: Edit, in change: Change, as type: Operation.Type)
        -> [Operation]?
    {
        if let decoded { return decoded.operations(of: edit, in: change, as: type, blobs: blobLookup) }
        return try? Operation.decodeGroup(edit.operations, blobs: blobLookup(for: change))
    }

    /// The blobs `change` refers to that the store holds (`nil` when it refers to none, or they cannot be read: the
    /// change's members then read as unavailable).
    func blobLookup(for change: Change) -> BlobLookup? {
        change.blobs.isEmpty ? nil : (try? store.blobLookup(for: [change])) ?? BlobLookup()
    }

    /// What a replay produced.
    struct Outcome {
        var model: Model
        /// Operations that did not apply (skipped, identically on every device).
        var skippedOperations: Int
        /// The baselines and resolutions on the way whose contents the model refused (read as carrying none).
        var refusedContents: [ChangeHash] = []
        /// How the replay read the log.
        var reading = Reading.whole
        /// With ``notesPassedStates``, for a model whose text is all of it and a replay from the change graph that
        /// applied everything: the states at points the walk passed (changes every later change in it descends
        /// from, none of the heads), the latest first.
        var passedStates: [VersionTracking<Model>.KnownState] = []
    }

    /// How a replay read the log.
    enum Reading: Equatable {
        /// The changes it needed, all at once (or none).
        case whole
        /// Streamed, `batches` batches, forward to the head (``streamedState(at:from:refused:)``).
        case streamed(batches: Int)
        /// Streamed, `batches` batches, as far as the history was one line; then back from the head to where the
        /// stream stopped.
        case streamedThenLine(batches: Int)
    }

    /// The state at `head`.
    ///
    /// - Throws: ``DocumentError`` `.store` when the log cannot be read, `.invalidContents` when a checkpoint
    ///   (written by this device) cannot be loaded.
    func state(at head: Change) throws(DocumentError) -> Outcome {
        var refused: [ChangeHash] = []
        // A baseline, or a resolution with contents, is its own state: nothing before it is read.
        if let state = resetState(at: head, refused: &refused) { return Outcome(model: state, skippedOperations: 0) }
        if let outcome = try stateNearKnown(at: head) { return outcome }
        let checkpoint: Checkpoint?
        do {
            checkpoint = try store.checkpoints.latest(of: document, within: head.vector)
        } catch {
            throw .store(error, "reading checkpoints")
        }
        if let outcome = try streamedState(at: head, from: checkpoint, refused: refused) { return outcome }
        if let checkpoint {
            switch try replay(to: head, from: checkpoint, refused: &refused) {
            case .state(let outcome): return outcome
            case .graphMerge(let tail): return try graphState(from: [head], read: (checkpoint, tail))
            case .otherLine: break
            }
        }
        switch try replay(to: head, from: nil, refused: &refused) {
        case .state(let outcome): return outcome
        case .graphMerge(let tail): return try graphState(from: [head], read: (nil, tail))
        case .otherLine: return try graphState(from: [head])
        }
    }

    /// How many changes ``stateNearKnown(at:)`` walks back before it leaves the state to a replay from a checkpoint.
    static var nearWalkLimit: Int { 64 }

    /// The state at `head` when a short walk back along primary parents meets a known state (``known``), or a merge
    /// computed from the change graph (then replayed from the graph, which starts from the known states): what
    /// arrives while devices type together costs the changes since the versions the document knows, not a read of
    /// the log since its last checkpoint. `nil` when the walk meets neither within ``nearWalkLimit`` changes.
    private func stateNearKnown(at head: Change) throws(DocumentError) -> Outcome? {
        guard !known.isEmpty else { return nil }
        let rule = primaryParentRule(ReplayTail([]))
        var chain: [Change] = []
        var current = head
        var refused: [ChangeHash] = []
        while chain.count < Self.nearWalkLimit {
            if let state = known[current.hash] { return apply(chain, onto: state.model, refused: refused) }
            if isGraphMerge(current) {
                guard chain.isEmpty else {
                    let merged = try graphState(from: [current])
                    var outcome = apply(chain, onto: merged.model, refused: merged.refusedContents)
                    outcome.skippedOperations += merged.skippedOperations
                    outcome.passedStates = merged.passedStates
                    return outcome
                }
                return try graphState(from: [current])
            }
            if let state = resetState(at: current, refused: &refused) {
                return apply(chain, onto: state, refused: refused)
            }
            chain.append(current)
            guard let parent = try Self.primaryParent(of: current, by: rule) else { return nil }
            current = parent
        }
        return nil
    }

    /// What a replay along primary parents found.
    private enum LineReplay {
        /// The state.
        case state(Outcome)
        /// The checkpoint is of another line of history: it is not on the way.
        case otherLine
        /// A merge on the way is computed from the change graph (``isGraphMerge(_:)``); the changes read so far
        /// (the log after the checkpoint tried, within the head's vector) serve the graph's walk.
        case graphMerge(ReplayTail)
    }

    /// The state at `head` from `known`, whose state is `model`, when `head` descends from `known` along primary
    /// parents; `nil` otherwise (then a full ``state(at:)`` is needed).
    func advance(_ model: Model, from known: Change, to head: Change) throws(DocumentError) -> Outcome? {
        guard known.vector.isContained(in: head.vector) else { return nil }
        var refused: [ChangeHash] = []
        if let state = resetState(at: head, refused: &refused) { return Outcome(model: state, skippedOperations: 0) }
        let tail = try changes(since: known.vector, within: head.vector)
        switch try walkBack(from: head, to: known, by: primaryParentRule(tail), refused: &refused) {
        case nil: return nil
        case .reset(let outcome)?: return outcome
        case .reached(let chain)?: return apply(chain, onto: model, refused: refused)
        }
    }

    /// How a walk back along primary parents from a head to a known change ended (``walkBack(from:to:by:refused:)``).
    enum WalkBack {
        /// It reached the known change: the changes on the way, newest first.
        case reached([Change])
        /// It met a change whose contents set the state first: the state at the head, from it.
        case reset(Outcome)
    }

    /// Walks back from `head` along primary parents (`rule`) to `known`; `nil` when the walk meets a merge computed
    /// from the change graph or a parent outside `known`'s future (the head's line does not pass through `known`).
    /// Contents the model refuses on the way join `refused`.
    func walkBack(
        from head: Change, to known: Change, by rule: PrimaryParentRule<DocumentError>, refused: inout [ChangeHash]
    ) throws(DocumentError) -> WalkBack? {
        var chain: [Change] = []
        var current = head
        while current.hash != known.hash {
            if isGraphMerge(current) { return nil }
            if let state = resetState(at: current, refused: &refused) {
                return .reset(apply(chain, onto: state, refused: refused))
            }
            chain.append(current)
            guard let parent = try Self.primaryParent(of: current, by: rule),
                known.vector.isContained(in: parent.vector)
            else {
                return nil
            }
            current = parent
        }
        return .reached(chain)
    }

    /// The state at `head` from `model`, the merge of `heads` (whose vectors join to `joined`), when `head` is an
    /// edit made on exactly that merge (`Edit.isMadeOnMerge`), or descends along primary parents from one; `nil`
    /// otherwise. What a document showing a silent merge needs when another device's edit on the same merge
    /// arrives: that edit's operations, not a replay of the versions.
    func advance(
        merge model: Model, of heads: Set<ChangeHash>, joined: VersionVector, to head: Change
    ) throws(DocumentError) -> Outcome? {
        guard joined.isContained(in: head.vector) else { return nil }
        let tail = try changes(since: joined, within: head.vector)
        let rule = primaryParentRule(tail)
        var chain: [Change] = []
        var current = head
        while true {
            if current.isEditMadeOnMerge, current.parents.count == heads.count, heads.isSuperset(of: current.parents) {
                chain.append(current)
                return apply(chain, onto: model, refused: [])
            }
            var refused: [ChangeHash] = []
            if isGraphMerge(current) || resetState(at: current, refused: &refused) != nil { return nil }
            chain.append(current)
            guard let parent = try Self.primaryParent(of: current, by: rule), joined.isContained(in: parent.vector)
            else { return nil }
            current = parent
        }
    }

    private func replay(to head: Change, from checkpoint: Checkpoint?, refused: inout [ChangeHash])
        throws(DocumentError) -> LineReplay
    {
        let tail = try changes(since: checkpoint?.vector ?? VersionVector(), within: head.vector)
        let rule = primaryParentRule(tail, near: checkpoint?.vector)
        var chain: [Change] = []
        var current = head
        while true {
            if let checkpoint, current.vector == checkpoint.vector {
                return .state(apply(chain, onto: try load(checkpoint.contents), refused: refused))
            }
            if isGraphMerge(current) { return .graphMerge(tail) }
            if let state = resetState(at: current, refused: &refused) {
                return .state(apply(chain, onto: state, refused: refused))
            }
            chain.append(current)
            guard let parent = try Self.primaryParent(of: current, by: rule) else {
                // A root: the first change of the document.
                return .state(apply(chain, onto: Model(), refused: refused))
            }
            // Below the checkpoint without meeting it: the checkpoint is of another line of history.
            if let checkpoint, parent.vector.isContained(in: checkpoint.vector), parent.vector != checkpoint.vector {
                return .otherLine
            }
            current = parent
        }
    }

    func changes(since vector: VersionVector, within limit: VersionVector) throws(DocumentError) -> ReplayTail {
        do {
            return ReplayTail(try store.changes(of: document, since: vector, within: limit))
        } catch {
            throw .store(error, "reading the log")
        }
    }

    /// The content rule over `tail` (the changes read for this replay), then the store: first the latest changes of
    /// `vector` (a checkpoint's, which the first changes after it name), by identity, then by hash (which reads every
    /// segment of a folded log).
    func primaryParentRule(_ tail: ReplayTail, near vector: VersionVector? = nil) -> PrimaryParentRule<DocumentError> {
        let store = store
        let document = document
        return PrimaryParentRule { [self] hash throws(DocumentError) in
            if let parent = tail[hash] { return parent }
            if let vector, let latest = try latestChange(hash, of: vector) { return latest }
            do { return try store.change(hash, of: document) } catch { throw .store(error, "reading the log") }
        }
    }

    /// The change with hash `hash` if it is one of the latest changes of `vector` (a head of a version, a
    /// checkpoint's last change of a device): found by identity, which decodes a folded log only as far as it, where
    /// a lookup by hash reads every segment.
    func latestChange(_ hash: ChangeHash, of vector: VersionVector) throws(DocumentError) -> Change? {
        for entry in vector.entries {
            let latest: Change?
            do { latest = try store.change(ChangeID(device: entry.device, seq: entry.seq), of: document) } catch {
                throw .store(error, "reading the log")
            }
            if let latest, latest.hash == hash { return latest }
        }
        return nil
    }

    /// The parent whose state `change` starts from; `nil` for a root.
    ///
    /// - Throws: ``DocumentError`` `.store` when a parent is not in the log or the log cannot be read.
    static func primaryParent(of change: Change, by rule: PrimaryParentRule<DocumentError>) throws(DocumentError)
        -> Change?
    {
        switch try rule.primaryParent(of: change) {
        case .root: return nil
        case .parent(let parent): return parent
        case .missing(let missing):
            throw DocumentError(.store, "change \(change.id) names parent \(missing.shortHex), which is not in the log")
        }
    }

    /// The state `change` sets outright: the contents of a baseline or of a resolution that has some, when the
    /// model accepts them. `nil` for other changes, and for one whose contents the model refuses, which joins
    /// `refused` (and is not loaded again).
    func resetState(at change: Change, refused: inout [ChangeHash]) -> Model? {
        let contents: Data
        switch change.kind {
        case .baseline(let baseline): contents = baseline
        case .resolution(let resolution):
            guard let resolved = resolution.contents else { return nil }
            contents = resolved
        case .edit, .lifecycle: return nil
        }
        guard !refused.contains(change.hash) else { return nil }
        do {
            return try load(contents)
        } catch {
            refused.append(change.hash)
            return nil
        }
    }

    func load(_ encoded: Data) throws(DocumentError) -> Model {
        do {
            // Read once to learn the blobs the contents refer to, then again with those the store has.
            let lookup = BlobLookup()
            let contents = try DocumentContents(decoding: encoded, blobs: lookup)
            // Only members the model keeps as bytes may be blobs: contents that refer to another (a peer's) are
            // refused, whether or not its blob is here, so every device reads them the same way.
            if let member = lookup.referencedMembers.first(where: { !Model.isBlobMember($0) }) {
                throw DocumentError(
                    .invalidContents, "stored contents refer to a blob for '\(member)', which the model reads itself")
            }
            guard !lookup.missing.isEmpty else { return try Model(contents: contents) }
            let found = (try? store.blobs(lookup.missing)) ?? [:]
            guard !found.isEmpty else { return try Model(contents: contents) }
            return try Model(contents: DocumentContents(decoding: encoded, blobs: BlobLookup(found.values)))
        } catch let error as ModelError {
            throw DocumentError(.invalidContents, "stored contents cannot be loaded", cause: error)
        } catch {
            let what = error is CodecError ? "decoded" : "loaded"
            throw DocumentError(.invalidContents, "stored contents cannot be \(what)", cause: error)
        }
    }

    /// Applies the operations of `chain` (newest first) onto `model`. A baseline or a resolution with contents in
    /// the chain is one whose contents the model refused (a replay starts from every other): it applies nothing.
    func apply(_ chain: [Change], onto model: Model, refused: [ChangeHash]) -> Outcome {
        var outcome = Outcome(model: model, skippedOperations: 0, refusedContents: refused)
        for change in chain.reversed() {
            guard case .edit(let edit) = change.kind else { continue }
            guard let operations = self.operations(of: edit, in: change, as: Model.Operation.self) else {
                outcome.skippedOperations += 1
                continue
            }
            outcome.skippedOperations += outcome.model.applyReplayed(operations)
        }
        return outcome
    }
}
