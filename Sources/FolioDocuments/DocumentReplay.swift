import FolioCore
import FolioStore
import Foundation

/// Rebuilds a model from the log: the state at a head, from the best checkpoint plus the changes after it.
///
/// The state at a change is the state at its primary parent (``ContentLine``) with the change's operations applied,
/// so following primary parents from a head traces one line of history, and replaying that line gives the same
/// state on every device. A baseline, or a resolution with contents, sets the state outright.
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
        let line = contentLine(tail)
        var chain: [Change] = []
        var current = head
        while current.hash != known.hash {
            chain.append(current)
            if current.isReset { return try apply(chain, onto: Model(), reset: current) }
            guard let parent = try line.primaryParent(of: current), known.vector.isContained(in: parent.vector) else {
                return nil
            }
            current = parent
        }
        return try apply(chain, onto: model, reset: nil)
    }

    private func replay(to head: Change, from checkpoint: Checkpoint?) throws(DocumentError) -> Outcome? {
        let tail = try changes(since: checkpoint?.vector ?? VersionVector(), within: head.vector)
        let line = contentLine(tail)
        var chain: [Change] = []
        var current = head
        while true {
            if let checkpoint, current.vector == checkpoint.vector {
                return try apply(chain, onto: load(checkpoint.contents), reset: nil)
            }
            chain.append(current)
            if current.isReset { return try apply(chain, onto: Model(), reset: current) }
            guard let parent = try line.primaryParent(of: current) else {
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

    /// The content rule over `tail` (the changes read for this replay), then the store.
    private func contentLine(_ tail: [ChangeHash: Change]) -> ContentLine {
        let store = store, document = document
        return ContentLine { hash throws(DocumentError) in
            if let parent = tail[hash] { return parent }
            do throws(StoreError) { return try store.change(hash, of: document) } catch { throw .store(error, "reading the log") }
        }
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
