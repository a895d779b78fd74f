import FolioConflicts
import FolioCore
import FolioMerge
import FolioStore
import HeapModule

/// The replay of a character-merged text (`CharacterMergeable`): the change graph walked by a `TextEventGraph`.
///
/// Every change has content parents: a `merge` resolution without contents has the versions it kept
/// (`Change.keptVersions`); a baseline or a resolution with contents the model accepts has all its parents (its
/// contents replace all it was made on); any other resolution made on several parents (a choice among versions) has
/// all its parents too, and keeps the text of its primary parent; any other change has its primary parent
/// (`PrimaryParentRule`), or none for a root. A change's state is its content past replayed as a graph: edits at the
/// positions their author saw, a baseline or a resolution with contents as the replacement of the text by its
/// contents (``TextEdit/replaceAll(with:)``), a choice as the text and the other parts of the version it keeps
/// (`TextEventGraph.add(agent:parents:keeping:)`), a lifecycle change or a merge as no edit. Where the history is one
/// line, this is the replay along primary parents.
///
/// The walk goes back from the heads, latest first (by lamport, then change id), and stops at the first change
/// that every change after it descends from and whose state is known without the graph: a state the caller knows
/// (``known``), the document's latest checkpoint in the past of every head, or a baseline or resolution with
/// contents. Opening a document with many concurrent branches so costs
/// the changes after that point, not the whole history.
extension DocumentReplay {
    /// Whether `change` is a merge that the graph computes: a `merge` resolution without contents, of a model that
    /// merges character by character, that kept at least one of its parents.
    func isGraphMerge(_ change: Change) -> Bool {
        change.mergesCharacters(of: Model.self)
    }

    /// The state merging `heads` (one head: the state at it) from the change graph.
    ///
    /// - Throws: ``DocumentError`` `.store` when the log cannot be read or a content parent is missing,
    ///   `.invalidContents` when the checkpoint cannot be loaded.
    ///
    /// `read`, when given, is the latest checkpoint within `heads`' vectors and the log after it within them, as a
    /// replay along primary parents already read them.
    func graphState(
        from heads: [Change], read: (checkpoint: Checkpoint?, tail: ReplayTail)? = nil
    ) throws(DocumentError) -> Outcome {
        guard let type = Model.self as? any CharacterMergeable.Type else {
            throw DocumentError(.invalidOperation, "this document's model does not merge character by character")
        }
        return try graphState(type, from: heads, read: read)
    }

    private func graphState<M: CharacterMergeable>(
        _ type: M.Type, from heads: [Change], read: (checkpoint: Checkpoint?, tail: ReplayTail)?
    ) throws(DocumentError) -> Outcome {
        let replayed = try replayGraph(type, from: heads, read: read)
        let model = replayed.rest.replacingMergeableText(with: replayed.graph.text) as! Model
        var outcome = Outcome(model: model, skippedOperations: replayed.skipped, refusedContents: replayed.refused)
        if notesPassedStates, !M.hasPartsBesideText, replayed.skipped == 0, replayed.refused.isEmpty {
            // As a head's state is read from the graph (`CharacterMergeGraph.state(at:)`): the text of the events in
            // the point's past, which the walk met all of.
            for (change, event) in replayed.passed {
                guard let text = try? replayed.graph.text(at: [event]) else { continue }
                outcome.passedStates.append(
                    .init(change: change, model: replayed.rest.replacingMergeableText(with: text) as! Model))
            }
        }
        return outcome
    }

    /// The character merge of `heads` (the competing versions' heads) from the change graph: the merged state, and
    /// a conflict wherever two versions overlap (`TextEventGraph.merge(of:)`), located by the model
    /// (`CharacterMergeable.textConflictLocation(_:)`). Where versions overlap, the merged state shows the first
    /// one's text of the stretch.
    ///
    /// - Throws: ``DocumentError`` `.store` when the log cannot be read or a content parent is missing,
    ///   `.invalidContents` when the checkpoint cannot be loaded, `.invalidOperation` when the model does not merge
    ///   character by character.
    func characterMerge(of heads: [Change]) throws(DocumentError) -> MergeResult<Model> {
        guard let graph = try characterMergeGraph(of: heads) else {
            throw DocumentError(.invalidOperation, "this document's model does not merge character by character")
        }
        return try graph.merge(of: heads)
    }

    /// Whether the model merges character by character and its text is all of it (a text document): the state at a
    /// head is then the text of the change graph at it (``CharacterMergeGraph/state(at:)``).
    var textIsAllOfModel: Bool {
        guard let type = Model.self as? any CharacterMergeable.Type else { return false }
        return !type.hasPartsBesideText
    }

    /// The change graph of `heads` replayed once, for their merge and the states at them
    /// (``CharacterMergeGraph``); `nil` for a model that does not merge character by character.
    ///
    /// - Throws: ``DocumentError`` `.store` when the log cannot be read or a content parent is missing,
    ///   `.invalidContents` when the checkpoint cannot be loaded.
    func characterMergeGraph(of heads: [Change]) throws(DocumentError) -> CharacterMergeGraph<Model>? {
        guard let type = Model.self as? any CharacterMergeable.Type else { return nil }
        return try characterMergeGraph(type, of: heads)
    }

    private func characterMergeGraph<M: CharacterMergeable>(_ type: M.Type, of heads: [Change]) throws(DocumentError)
        -> CharacterMergeGraph<Model>
    {
        CharacterMergeGraph(try replayGraph(type, from: heads, read: nil), from: heads)
    }

    /// A replayed change graph: the text's graph, the indexes of the heads' events in it (a head the walk started
    /// from is none of them), the model's other parts, and what did not apply.
    struct GraphReplay<M: CharacterMergeable> {
        var graph: TextEventGraph<ChangeID>
        var heads: [Int]
        /// Each head's event, by hash; `nil` for a head whose state is the graph's base (where the walk stopped).
        var headEvents: [ChangeHash: Int?]
        var rest: M
        var skipped: Int
        var refused: [ChangeHash]
        /// The change whose state is the graph's base text (where the walk stopped), if the walk stopped at one.
        var baseChange: ChangeID? = nil
        /// Points the walk passed without stopping that every later change it met descends from (none of the
        /// heads), with their events: the nearest, and the nearest ``passedSpacing`` changes below the heads.
        var passed: [(change: Change, event: Int)] = []
    }

    /// How many changes below the heads the second point a graph replay notes as passed lies at least (the spacing
    /// of the states an open document keeps): changes that arrive later, made before the nearest point, usually
    /// come after that one.
    static var passedSpacing: UInt64 { VersionTracking<Model>.stateSpacing }

    /// How many changes below its tail a graph replay's walk reads one by one before it reads the rest of the log
    /// there at once (each read by hash is a transaction of its own, and a search of a folded log's segments).
    static var singleReadsBelowTail: Int { 32 }

    /// `throughResets`: the walk goes on past a change whose contents replace the text (a baseline, a resolution
    /// with contents), which is then replayed as the replacement of the text (only what it changes is its own), back
    /// to the document's first change, as who-wrote-what needs.
    func replayGraph<M: CharacterMergeable>(
        _ type: M.Type, from heads: [Change], read: (checkpoint: Checkpoint?, tail: ReplayTail)?,
        throughResets: Bool = false
    ) throws(DocumentError) -> GraphReplay<M> {
        var limit = VersionVector()
        for head in heads { limit.merge(head.vector) }
        // The walk can stop only at a change in the past of every head: the checkpoint it may meet is the latest
        // there. The latest within `limit` is usually a device's own, on its own branch, never met.
        var common = heads.first?.vector ?? VersionVector()
        for head in heads.dropFirst() { common = common.intersecting(head.vector) }
        func latestCheckpoint(within vector: VersionVector) throws(DocumentError) -> Checkpoint? {
            do { return try store.checkpoints.latest(of: document, within: vector) } catch {
                throw .store(error, "reading checkpoints")
            }
        }
        var checkpoint: Checkpoint?
        let tail: ReplayTail
        // What the log holds below the tail, as far as the walk may go: every change within `limit`, or within the
        // known state the tail starts after.
        var belowTail = limit
        if let read {
            (checkpoint, tail) = read
        } else {
            checkpoint = try latestCheckpoint(within: common)
            // The walk usually stops at the latest known state in the past of every head, when there is one later
            // than the checkpoint: the log is read from there (a change the walk meets below it is read by itself).
            var since = checkpoint?.vector ?? VersionVector()
            for (vector, _) in known.values
            where vector.isContained(in: common) && vector.changeCount > since.changeCount {
                since = vector
            }
            tail = try changes(since: since, within: limit)
            belowTail = since
        }
        let rule = primaryParentRule(tail)
        var nodes = WalkNodes(tail)
        var checkpointLatest: (vector: VersionVector, changes: [Change])?
        // The changes below the tail, read at once when the walk goes on past it (a known state it started from that
        // no point of the walk lands on): one read of the log rather than one per change.
        var below: ReplayTail?
        var readsBelow = 0
        /// The node of `hash`, a parent the change at node `child` names, read from the store when the walk has not
        /// met it.
        func parentNode(_ hash: ChangeHash, of child: Int, in nodes: inout WalkNodes) throws(DocumentError) -> Int {
            if let node = nodes.nearbyNode(of: hash, namedBy: child) { return node }
            // The first changes after the checkpoint name its latest changes, which the log finds by identity
            // without hashing every change (read once a checkpoint).
            if let vector = checkpoint?.vector {
                if checkpointLatest?.vector != vector {
                    var latest: [Change] = []
                    for entry in vector.entries {
                        do {
                            if let change = try store.change(
                                ChangeID(device: entry.device, seq: entry.seq), of: document)
                            {
                                latest.append(change)
                            }
                        } catch {
                            throw .store(error, "reading the log")
                        }
                    }
                    checkpointLatest = (vector, latest)
                }
                if let found = checkpointLatest?.changes.first(where: { $0.hash == hash }) {
                    return nodes.node(of: found, namedBy: child)
                }
            }
            if let node = nodes.node(of: hash, namedBy: child) { return node }
            readsBelow += 1
            if readsBelow > Self.singleReadsBelowTail {
                if below == nil {
                    below = try changes(since: checkpoint?.vector ?? VersionVector(), within: belowTail)
                }
                // A checkpoint the walk moved back to since may leave a change out: it is read by itself.
                if let found = below?[hash] { return nodes.node(of: found, namedBy: child) }
            }
            let found: Change?
            do { found = try store.change(hash, of: document) } catch { throw .store(error, "reading the log") }
            guard let found else {
                throw DocumentError(
                    .store, "change \(nodes[child].id) names parent \(hash.shortHex), which is not in the log")
            }
            return nodes.node(of: found, namedBy: child)
        }

        // Back from the heads, latest first, to the point every later change descends from: the only change
        // pending, unless a root was met on the way. A root (a device's first change made on nothing, which the
        // store accepts beside the document's own) descends from nothing, so no change stands for the past of
        // everything after it: the walk then goes back to the start, whatever checkpoints this device holds, and
        // every device replays the same past.
        var refused: [ChangeHash] = []
        var pending = Heap<LatestNode>()
        for head in heads {
            let node = nodes.node(of: head, namedBy: nil)
            if !nodes.seen[node] {
                nodes.seen[node] = true
                pending.insert(LatestNode(head, node: node))
            }
        }
        // Each change met (its node), latest first, with its content parents (nodes) and, for a choice among
        // versions, the version it keeps (a node, or -1).
        var walked: [Int] = []
        var walkedParents = EventParents()
        var walkedKeeps: [Int] = []
        // Room for every change read (most are met): grown step by step, the lists are copied at each doubling.
        walked.reserveCapacity(nodes.count)
        walkedKeeps.reserveCapacity(nodes.count)
        walkedParents.reserveCapacity(events: nodes.count, links: nodes.count + nodes.count / 4)
        var base = M()
        var baseChange: ChangeID?
        var rootMet = false
        let headHashes = Set(heads.map(\.hash))
        // The points passed (``GraphReplay/passed``), as nodes.
        var passedNodes: [Int] = []
        var spacedPassed = false
        var parents: [Int] = []
        while let next = pending.popMax() {
            let change = nodes[next.node]
            let isMerge = isGraphMerge(change)
            // Contents are loaded again when replayed: a walk through many large baselines holds one at a time.
            let reset = isMerge ? nil : resetState(at: change, refused: &refused).map { $0 as! M }
            if pending.isEmpty, !rootMet {
                // The latest checkpoint within this change's past, to meet further back: the one found so far
                // while it is in that past (the stops only go back), else the latest there.
                if let found = checkpoint, !found.vector.isContained(in: change.vector) {
                    checkpoint = try latestCheckpoint(within: change.vector)
                }
                if let state = known[change.hash] {
                    base = state.model as! M
                    baseChange = change.id
                    break
                }
                if let checkpoint, change.vector == checkpoint.vector {
                    base = try load(checkpoint.contents) as! M
                    baseChange = change.id
                    break
                }
                if let reset, !throughResets {
                    base = reset
                    baseChange = change.id
                    break
                }
                if !headHashes.contains(change.hash) {
                    if passedNodes.isEmpty {
                        passedNodes.append(next.node)
                    } else if !spacedPassed,
                        change.vector.changeCount + Self.passedSpacing <= limit.changeCount
                    {
                        passedNodes.append(next.node)
                        spacedPassed = true
                    }
                }
            }
            parents.removeAll(keepingCapacity: true)
            var keeps = -1
            if isMerge {
                for hash in change.mergedVersions { parents.append(try parentNode(hash, of: next.node, in: &nodes)) }
            } else if reset != nil {
                // Its contents replace the text of everything it was made on (the versions a resolution merged or
                // discarded, the heads a baseline joined): all of it is its past, so the text it keeps of another
                // version is not typed a second time by it, and the text it leaves out is deleted.
                for hash in change.parents { parents.append(try parentNode(hash, of: next.node, in: &nodes)) }
            } else if change.parents.count == 1, !change.isResolution {
                // The primary parent of a change made on one parent, which no resolution chose among.
                parents.append(try parentNode(change.parents[0], of: next.node, in: &nodes))
            } else if let parent = try Self.primaryParent(of: change, by: rule) {
                if change.isResolution, change.parents.count > 1 {
                    // A choice among versions: its text is the version it keeps, and all it was made on is its
                    // past, so that what the versions it discarded typed stays deleted when edits made on them
                    // later merge in.
                    for hash in change.parents { parents.append(try parentNode(hash, of: next.node, in: &nodes)) }
                    keeps = nodes.node(of: parent, namedBy: next.node)
                } else {
                    parents.append(nodes.node(of: parent, namedBy: next.node))
                }
            }
            for parent in parents where !nodes.seen[parent] {
                nodes.seen[parent] = true
                pending.insert(LatestNode(nodes[parent], node: parent))
            }
            if parents.isEmpty { rootMet = true }
            walked.append(next.node)
            walkedParents.append(parents)
            walkedKeeps.append(keeps)
        }

        // The events, earliest first: every change after its content parents (those before the walk's end are its
        // base).
        let events = EventList(
            walked: consume walked, parents: walkedParents, keeps: consume walkedKeeps, nodeCount: nodes.count)
        let eventParents = events.parents
        var skipped = 0
        // Every event's edits, one after the other, and where each event's start, and after the last, the end: no
        // array per event.
        var edits: [TextEdit] = []
        var editStarts = [0]
        var effects: [OtherPartsEffect<M>] = []
        edits.reserveCapacity(events.count)
        editStarts.reserveCapacity(events.count + 1)
        // A model whose text is all of it (a text document) keeps no effects; the buffers are made once, not per
        // event: this code is not specialized for the model, and each generic value made costs a metadata lookup.
        let keepsEffects = M.hasPartsBesideText
        if keepsEffects { effects.reserveCapacity(events.count) }
        var others: [M.Operation] = []
        var contents: M?
        // Each event's author, read here in event order: the text's loop below goes branch by branch, and reading a
        // whole change there for its identity costs a copy of it and a jump through the list.
        var authors: [ChangeID] = []
        authors.reserveCapacity(events.count)
        for event in 0..<events.count {
            let change = nodes[events.nodes[event]]
            authors.append(change.id)
            let isEdit: Bool
            if case .edit(let edit) = change.kind {
                // Most events: an edit has no contents, and only a model with parts beside its text leaves
                // operations in `others`, which is cleared only then. No optional of the model is touched: in this
                // unspecialized code, each such value costs a metadata lookup.
                isEdit = true
                if !others.isEmpty { others.removeAll(keepingCapacity: true) }
                appendTextEdits(of: edit, in: change, as: M.self, to: &edits, others: &others, skipped: &skipped)
            } else {
                isEdit = false
                others.removeAll(keepingCapacity: true)
                contents = nil
                appendTextEdits(replacedBy: change, to: &edits, contents: &contents, refused: &refused)
            }
            editStarts.append(edits.count)
            guard keepsEffects else { continue }
            if !isEdit, let contents {
                effects.append(.contents(contents))
            } else if events.keeps[event] >= 0 {
                // A choice among versions: its other parts are those of the version it keeps (the walk's base when
                // that version is not among the events).
                let kept = events.position[events.keeps[event]]
                effects.append(.choice(keeping: kept >= 0 ? kept : nil))
            } else {
                effects.append(others.isEmpty ? .none : .operations(others))
            }
        }
        let rest =
            M.hasPartsBesideText
            ? Self.otherParts(from: base, effects, parents: eventParents.lists, skipped: &skipped) : base
        // The text, branch by branch: any order that puts parents first gives the same text, and one that follows
        // a branch as far as it goes moves the graph's view between branches only where they meet. In lamport
        // order, two devices that typed apart interleave change by change, and every move would undo and redo a
        // whole branch.
        var graph = TextEventGraph<ChangeID>(base: base.mergeableText)
        graph.reserveCapacity(events: events.count, scalars: Self.insertedScalars(edits))
        var index = [Int](repeating: -1, count: events.count)
        for event in Self.branchOrder(parents: eventParents) {
            do {
                parents.removeAll(keepingCapacity: true)
                for link in eventParents.range(of: event) { parents.append(index[eventParents.parent(atLink: link)]) }
                let agent = authors[event]
                let keeps = events.keeps[event]
                if keeps >= 0 {
                    // The kept version is the walk's base when it is not among the events.
                    let kept = events.position[keeps] >= 0 ? [index[events.position[keeps]]] : []
                    index[event] = try graph.add(agent: agent, parents: parents, keeping: kept)
                } else {
                    index[event] = try graph.add(
                        agent: agent, parents: parents, edits: edits, range: editStarts[event]..<editStarts[event + 1])
                }
            } catch {
                // Unreachable: every parent comes first, its index from the graph itself.
                skipped += 1
            }
        }
        var eventOfHead: [ChangeHash: Int?] = [:]
        for head in heads {
            eventOfHead[head.hash] = nodes.node(of: head.hash, namedBy: nil).flatMap {
                events.position[$0] >= 0 ? index[events.position[$0]] : nil
            }
        }
        let headEvents = heads.compactMap { head in eventOfHead[head.hash] ?? nil }
        let passed = passedNodes.compactMap { node -> (change: Change, event: Int)? in
            let event = events.position[node]
            return event >= 0 && index[event] >= 0 ? (nodes[node], index[event]) : nil
        }
        return GraphReplay(
            graph: graph, heads: headEvents, headEvents: eventOfHead, rest: rest,
            skipped: skipped + graph.skippedEdits, refused: refused, baseChange: baseChange, passed: passed)
    }

    /// About how many scalars `edits` type (a replacement of the whole text counts its new text).
    static func insertedScalars(_ edits: [TextEdit]) -> Int {
        var count = 0
        for edit in edits {
            switch edit {
            case .insert(_, let scalars), .append(let scalars), .replaceAll(let scalars): count += scalars.count
            case .delete: break
            }
        }
        return count
    }

    /// The events `0..<parents.count` (each one's parents earlier in the list) in an order that puts every event
    /// after its parents and follows a branch as far as it goes before the next: depth first from the latest
    /// event, each event once its parents are done.
    ///
    /// - Complexity: O(*n* + *e*) for *n* events and *e* parent links.
    static func branchOrder(parents: [[Int]]) -> [Int] {
        var links = EventParents()
        for eventParents in parents { links.append(eventParents) }
        return branchOrder(parents: links)
    }

    /// ``branchOrder(parents:)`` of parents held as one list of links.
    static func branchOrder(parents: EventParents) -> [Int] {
        var order: [Int] = []
        order.reserveCapacity(parents.count)
        var visited = [Bool](repeating: false, count: parents.count)
        // Each event on the path with the place of its next parent among the links.
        var stack: [(event: Int, nextLink: Int)] = []
        for start in (0..<parents.count).reversed() where !visited[start] {
            visited[start] = true
            stack.append((start, parents.range(of: start).lowerBound))
            while let (event, nextLink) = stack.last {
                guard nextLink < parents.range(of: event).upperBound else {
                    order.append(event)
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].nextLink += 1
                let parent = parents.parent(atLink: nextLink)
                if !visited[parent] {
                    visited[parent] = true
                    stack.append((parent, parents.range(of: parent).lowerBound))
                }
            }
        }
        return order
    }

    /// Appends to `edits` the text edits of `edit` (the kind of `change`), read as `model` reads them; the model's
    /// other operations go to `others` (appended). Operations that do not decode are counted in `skipped` and add no
    /// edit.
    private func appendTextEdits<M: CharacterMergeable>(
        of edit: Edit, in change: Change, as model: M.Type, to edits: inout [TextEdit], others: inout [M.Operation],
        skipped: inout Int
    ) {
        let start = edits.count
        if decoded == nil {
            // Decoded by the model, which knows its operations' type.
            guard M.appendTextEdits(ofGroup: edit.operations, to: &edits, others: &others) else {
                skipped += 1
                others.removeAll(keepingCapacity: true)
                if edits.count > start { edits.removeSubrange(start...) }
                return
            }
        } else {
            guard let operations = self.operations(of: edit, in: change, as: M.Operation.self) else {
                skipped += 1
                return
            }
            M.appendTextEdits(of: operations, to: &edits, others: &others)
        }
    }

    /// Appends to `edits` the edit of a change that is not an edit: for a baseline or a resolution with contents,
    /// whose text replaces the whole text, that replacement, with the contents in `contents`; nothing for any other
    /// change. Contents the model refuses join `refused`.
    private func appendTextEdits<M: CharacterMergeable>(
        replacedBy change: Change, to edits: inout [TextEdit], contents: inout M?, refused: inout [ChangeHash]
    ) {
        switch change.kind {
        case .baseline, .resolution:
            guard !isGraphMerge(change), let state = resetState(at: change, refused: &refused) else { return }
            let kept = state as! M
            contents = kept
            edits.append(.replaceAll(with: kept.mergeableText))
        case .edit, .lifecycle:
            return
        }
    }

    /// The model's parts beside the text: every event's effect on them applied to `base` in the replay's order
    /// (lamport, then change id). A baseline or a resolution with contents changes only what its contents change
    /// from the state it was made on (the effects of its past applied the same way), so that an image another
    /// device added apart, earlier in that order, stays; a choice among versions changes what the version it keeps
    /// has differently from the state it was made on, so that it shows the kept version's parts whatever order its
    /// versions' effects came in. Operations that do not apply are counted in `skipped`.
    ///
    /// - Complexity: O(*n*) effects for *n* events, and O(*n*) more for each event with contents or a choice.
    private static func otherParts<M: CharacterMergeable>(
        from base: M, _ effects: [OtherPartsEffect<M>], parents: [[Int]], skipped: inout Int
    ) -> M {
        // The state each event with contents or a choice was made on, and the state of each kept version, before
        // the effects are applied in order.
        var madeOn: [Int: M] = [:]
        var kept: [Int: M] = [:]
        func past(of events: [Int]) -> Set<Int> {
            var past = Set<Int>()
            var pending = events
            while let earlier = pending.popLast() {
                if past.insert(earlier).inserted { pending += parents[earlier] }
            }
            return past
        }
        func replayed(_ events: Set<Int>) -> M {
            var state = base
            var ignored = 0
            for earlier in events.sorted() {
                apply(effects[earlier], madeOn: madeOn[earlier], kept: kept[earlier], to: &state, skipped: &ignored)
            }
            return state
        }
        for (event, effect) in effects.enumerated() {
            switch effect {
            case .contents:
                madeOn[event] = replayed(past(of: parents[event]))
            case .choice(let keeping):
                madeOn[event] = replayed(past(of: parents[event]))
                kept[event] = keeping.map { replayed(past(of: [$0])) } ?? base
            case .none, .operations:
                break
            }
        }
        var rest = base
        for (event, effect) in effects.enumerated() {
            apply(effect, madeOn: madeOn[event], kept: kept[event], to: &rest, skipped: &skipped)
        }
        return rest
    }

    private static func apply<M: CharacterMergeable>(
        _ effect: OtherPartsEffect<M>, madeOn: M?, kept: M?, to state: inout M, skipped: inout Int
    ) {
        switch effect {
        case .none:
            break
        case .operations(let operations):
            for operation in operations where (try? state.apply(operation)) == nil { skipped += 1 }
        case .contents(let contents):
            state = state.applyingOtherParts(changedFrom: madeOn!, to: contents)
        case .choice:
            state = state.applyingOtherParts(changedFrom: madeOn!, to: kept!)
        }
    }
}

/// What one change of a character-merged replay does to the model's parts beside the text.
private enum OtherPartsEffect<M: CharacterMergeable> {
    /// Nothing.
    case none
    /// Operations on the other parts, applied in the replay's order.
    case operations([M.Operation])
    /// The contents of a baseline or a resolution: the other parts they change from the state it was made on.
    case contents(M)
    /// A choice among versions: the other parts of the version it keeps (an event, or the walk's base when `nil`)
    /// that differ from the state it was made on.
    case choice(keeping: Int?)
}

extension Change {
    /// Whether the change is a resolution.
    fileprivate var isResolution: Bool {
        if case .resolution = kind { true } else { false }
    }
}
