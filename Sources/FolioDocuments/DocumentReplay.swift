import FolioCore
import FolioStore
import Foundation

/// Rebuilds a model from the log: the state at a head, from the best checkpoint plus the changes after it.
///
/// The state at a change is the state at its primary parent with the change's operations applied. The primary
/// parent is, for a resolution, the version it chose, and otherwise the parent that would win (highest lamport,
/// then device) among those that carry contents (a parent that only renamed or moved contents another parent
/// includes is passed over, as ``Document`` passes over such heads) — so following primary parents from a head traces one line of history, and replaying that line
/// gives the same state on every device. A baseline, or a resolution with contents, sets the state outright.
struct DocumentReplay<Model: DocumentModel> {
    let store: ChangeLogStore
    let document: DocumentID

    /// What a replay produced.
    struct Outcome {
        var model: Model
        /// Operations that did not apply (skipped, identically on every device).
        var skippedOperations: Int
    }

    /// The state at `head`.
    ///
    /// - Throws: ``DocumentError`` when the log cannot be read or holds contents the model refuses.
    func state(at head: Change) throws(DocumentError) -> Outcome {
        // A baseline, or a resolution with contents, is its own state: nothing before it is read.
        if head.isReset { return try apply([head], onto: Model(), reset: head) }
        let checkpoint: Checkpoint?
        do {
            checkpoint = try store.latestCheckpoint(of: document, within: head.vector)
        } catch {
            throw .store(error, "reading checkpoints")
        }
        if let checkpoint, let outcome = try replay(to: head, from: checkpoint) { return outcome }
        return try replay(to: head, from: nil)!
    }

    /// The state at `head` from `known`, whose state is `model`, when `head` descends from `known` along primary
    /// parents; `nil` otherwise (then a full ``state(at:)`` is needed).
    func advance(_ model: Model, from known: Change, to head: Change) throws(DocumentError) -> Outcome? {
        guard known.vector.isContained(in: head.vector) else { return nil }
        if head.isReset { return try apply([head], onto: Model(), reset: head) }
        let tail = try changes(since: known.vector, within: head.vector)
        var chain: [Change] = []
        var current = head
        while current.hash != known.hash {
            chain.append(current)
            if current.isReset { return try apply(chain, onto: Model(), reset: current) }
            guard let parent = try primaryParent(of: current, in: tail), known.vector.isContained(in: parent.vector) else {
                return nil
            }
            current = parent
        }
        return try apply(chain, onto: model, reset: nil)
    }

    private func replay(to head: Change, from checkpoint: Checkpoint?) throws(DocumentError) -> Outcome? {
        let tail = try changes(since: checkpoint?.vector ?? VersionVector(), within: head.vector)
        var chain: [Change] = []
        var current = head
        while true {
            if let checkpoint, current.vector == checkpoint.vector {
                return try apply(chain, onto: load(checkpoint.contents), reset: nil)
            }
            chain.append(current)
            if current.isReset { return try apply(chain, onto: Model(), reset: current) }
            guard let parent = try primaryParent(of: current, in: tail) else {
                // A root: the first change of the document.
                return try apply(chain, onto: Model(), reset: nil)
            }
            // Below the checkpoint without meeting it: the checkpoint is of another line of history.
            if let checkpoint, parent.vector.isContained(in: checkpoint.vector), parent.vector != checkpoint.vector {
                return nil
            }
            current = parent
        }
    }

    private func changes(since vector: VersionVector, within limit: VersionVector) throws(DocumentError) -> [ChangeHash: Change] {
        do {
            let changes = try store.changes(of: document, since: vector).filter { limit.contains($0.id) }
            return Dictionary(uniqueKeysWithValues: changes.map { ($0.hash, $0) })
        } catch {
            throw .store(error, "reading the log")
        }
    }

    private func primaryParent(of change: Change, in tail: [ChangeHash: Change]) throws(DocumentError) -> Change? {
        var candidates = change.parents
        if case .resolution(let resolution) = change.kind, !resolution.chosen.isEmpty { candidates = resolution.chosen }
        var parents: [Change] = []
        for hash in candidates {
            if let parent = tail[hash] {
                parents.append(parent)
                continue
            }
            let stored: Change?
            do {
                stored = try store.change(hash, of: document)
            } catch {
                throw .store(error, "reading the log")
            }
            guard let parent = stored else {
                throw DocumentError(.store, "change \(change.id) names parent \(hash.shortHex), which is not in the log")
            }
            parents.append(parent)
        }
        if parents.count > 1 {
            // A parent that only renamed or moved contents another parent already includes carries no state of its
            // own (the document showed the other one when the change was made on both): never follow it.
            let bases = try parents.map { parent throws(DocumentError) in try contentBase(of: parent, in: tail) }
            let carrying = parents.indices.filter { index in
                bases[index].hash == parents[index].hash
                    || !parents.indices.contains { $0 != index && parents[$0].vector.contains(bases[index].id) }
            }
            if !carrying.isEmpty, carrying.count < parents.count { parents = carrying.map { parents[$0] } }
        }
        return parents.max { ($0.lamport, $0.id.device) < ($1.lamport, $1.id.device) }
    }

    /// The change whose contents `change` shows: itself, or for a lifecycle change the latest non-lifecycle change
    /// down its first parents (lifecycle changes are made on their author's line).
    private func contentBase(of change: Change, in tail: [ChangeHash: Change]) throws(DocumentError) -> Change {
        var base = change
        while case .lifecycle = base.kind, let hash = base.parents.first {
            if let parent = tail[hash] {
                base = parent
                continue
            }
            let stored: Change?
            do { stored = try store.change(hash, of: document) } catch { throw .store(error, "reading the log") }
            guard let parent = stored else { break }
            base = parent
        }
        return base
    }

    private func load(_ encoded: Data) throws(DocumentError) -> Model {
        do {
            return try Model(contents: DocumentContents(decoding: encoded))
        } catch let error as ModelError {
            throw DocumentError(.invalidContents, "stored contents cannot be loaded", cause: error)
        } catch {
            throw DocumentError(.invalidContents, "stored contents cannot be decoded", cause: error as? CodecError)
        }
    }

    /// Applies `chain` (newest first) onto `model`; `reset`, when given, is the chain's oldest change and sets the
    /// state outright.
    private func apply(_ chain: [Change], onto model: Model, reset: Change?) throws(DocumentError) -> Outcome {
        var outcome = Outcome(model: model, skippedOperations: 0)
        for change in chain.reversed() {
            switch change.kind {
            case .baseline(let contents):
                outcome.model = try load(contents)
            case .resolution(let resolution):
                if let contents = resolution.contents { outcome.model = try load(contents) }
            case .edit(let edit):
                let operations: [Model.Operation]
                do {
                    operations = try Model.Operation.decodeGroup(edit.operations)
                } catch {
                    outcome.skippedOperations += 1
                    continue
                }
                for operation in operations {
                    do {
                        _ = try outcome.model.apply(operation)
                    } catch {
                        outcome.skippedOperations += 1
                    }
                }
            case .lifecycle:
                break
            }
        }
        return outcome
    }
}

extension Change {
    /// Whether the change sets the state outright (a baseline, or a resolution with contents).
    var isReset: Bool {
        switch kind {
        case .baseline: true
        case .resolution(let resolution): resolution.contents != nil
        default: false
        }
    }
}
