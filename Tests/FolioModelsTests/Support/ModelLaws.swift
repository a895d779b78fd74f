import FolioCore
import FolioTesting
import Foundation
import Testing

/// Random operations for one model: mostly valid for the state at hand, some that the model must refuse, and
/// followers that its `combine` is meant to merge.
protocol OperationSource {
    associatedtype Model: DocumentModel & Hashable

    /// A random operation for `model` (sometimes one it must refuse).
    static func operation(for model: Model, using generator: inout SplitMix64) -> Model.Operation

    /// An operation likely to combine with `previous`, which was just applied to reach `model`.
    static func follower(of previous: Model.Operation, in model: Model, using generator: inout SplitMix64)
        -> Model.Operation

    /// Traps when the model's internal bookkeeping is inconsistent.
    static func checkInvariants(_ model: Model)

    /// The state in a few words, for failure messages.
    static func summary(_ model: Model) -> String
}

/// The laws every model obeys, checked over random operation sequences. Each check prints its seed and puts it in
/// every failure message.
enum ModelLaws<Source: OperationSource> {
    typealias Model = Source.Model
    typealias Operation = Model.Operation

    /// A state reached by up to `steps` random operations from an empty document.
    static func randomState(steps: Int, using generator: inout SplitMix64) -> Model {
        var model = Model()
        for _ in 0..<generator.int(in: 0...steps) {
            _ = try? model.apply(Source.operation(for: model, using: &generator))
        }
        return model
    }

    /// Applying an operation then its inverse restores the exact state; a refused operation changes nothing; undoing a
    /// whole walk's inverses in reverse order gives back the start.
    static func checkInverses(seed: UInt64, walks: Int, steps: Int) {
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        var applied = 0
        var refused = 0
        for walk in 0..<walks {
            check.iteration = walk
            let start = randomState(steps: 8, using: &generator)
            var model = start
            var inverses: [Operation] = []
            for step in 0..<steps {
                let operation = Source.operation(for: model, using: &generator)
                let before = model
                do {
                    let inverse = try model.apply(operation)
                    Source.checkInvariants(model)
                    applied += 1
                    var undone = model
                    do {
                        _ = try undone.apply(inverse)
                        Source.checkInvariants(undone)
                        check.expect(
                            undone == before,
                            "step \(step): \(operation) then its inverse \(inverse) gave "
                                + "\(Source.summary(undone)) instead of \(Source.summary(before))")
                    } catch let error as ModelError {
                        check.expect(
                            false, "step \(step): the inverse \(inverse) of \(operation) was refused: \(error)")
                    } catch {
                        Issue.record("threw \(error), not ModelError")
                    }
                    inverses.append(inverse)
                } catch let error as ModelError {
                    refused += 1
                    check.expect(
                        error.code == .invalidOperation, "step \(step): \(operation) failed with \(error.code)")
                    check.expect(model == before, "step \(step): the refused \(operation) changed the state")
                } catch {
                    Issue.record("threw \(error), not ModelError")
                }
                if check.shouldStop { return }
            }
            for inverse in inverses.reversed() {
                do {
                    _ = try model.apply(inverse)
                } catch let error as ModelError {
                    check.expect(false, "undoing the walk: \(inverse) was refused: \(error)")
                    break
                } catch {
                    Issue.record("threw \(error), not ModelError")
                }
            }
            check.expect(
                model == start,
                "undoing the whole walk gave \(Source.summary(model)), "
                    + "not the start \(Source.summary(start))")
            if check.shouldStop { return }
        }
        #expect(applied > walks * steps / 3, "seed \(seed): only \(applied) operations applied")
        #expect(refused > 0, "seed \(seed): no operation was refused; the generator never tries invalid ones")
    }

    /// `Model.combined(_:)` equals folding `Model.combine(_:_:)` over the list from the front, on lists of random
    /// operations where most follow the one before (runs of typing and deleting) and some do not apply. Returns how
    /// many lists combined to fewer operations than they held.
    static func checkCombinedFold(seed: UInt64, lists: Int) -> Int {
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        var shortened = 0
        for list in 0..<lists {
            check.iteration = list
            var model = randomState(steps: 12, using: &generator)
            var operations = [Source.operation(for: model, using: &generator)]
            for _ in 0..<generator.int(in: 0...40) {
                // A follower of an operation that did not apply may lie past any position (even overflow).
                let applied = (try? model.apply(operations[operations.count - 1])) != nil
                operations.append(
                    applied && generator.chance(4, in: 5)
                        ? Source.follower(of: operations[operations.count - 1], in: model, using: &generator)
                        : Source.operation(for: model, using: &generator))
            }
            var folded: [Model.Operation] = []
            for operation in operations {
                if let last = folded.last, let both = Model.combine(last, operation) {
                    folded[folded.count - 1] = both
                } else {
                    folded.append(operation)
                }
            }
            let combined = Model.combined(operations)
            check.expect(combined == folded, "combined \(combined), folded pairwise \(folded), of \(operations)")
            if combined.count < operations.count { shortened += 1 }
            if check.shouldStop { break }
        }
        return shortened
    }

    /// Whenever `combine(a, b)` gives an operation, applying it has the effect of `a` then `b`, it applies exactly
    /// when they do, and its inverse undoes both. Returns how many pairs combined.
    @discardableResult
    static func checkCombine(seed: UInt64, trials: Int) -> Int {
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        var combined = 0
        for trial in 0..<trials {
            check.iteration = trial
            let model = randomState(steps: 12, using: &generator)
            let first = Source.operation(for: model, using: &generator)
            var afterFirst = model
            let firstApplies = (try? afterFirst.apply(first)) != nil
            let second =
                firstApplies && generator.chance(3, in: 4)
                ? Source.follower(of: first, in: afterFirst, using: &generator)
                : Source.operation(for: afterFirst, using: &generator)
            guard let both = Model.combine(first, second) else { continue }
            combined += 1
            var sequential = model
            let sequenceApplies = (try? sequential.apply(first)) != nil && (try? sequential.apply(second)) != nil
            var merged = model
            let inverse = try? merged.apply(both)
            let context = "\(first) + \(second) = \(both) on \(Source.summary(model))"
            if sequenceApplies {
                check.expect(inverse != nil, "the combination was refused though both apply: \(context)")
                check.expect(
                    merged == sequential,
                    "the combination gave \(Source.summary(merged)), the pair gave "
                        + "\(Source.summary(sequential)): \(context)")
                if let inverse {
                    var undone = merged
                    _ = try? undone.apply(inverse)
                    check.expect(undone == model, "the combination's inverse \(inverse) does not undo it: \(context)")
                }
            } else {
                check.expect(inverse == nil, "the combination applies though the pair does not: \(context)")
                check.expect(merged == model, "the refused combination changed the state: \(context)")
            }
            if check.shouldStop { break }
        }
        return combined
    }

    /// Groups of operations decode to themselves; every strict prefix of a group's bytes throws a ``CodecError``;
    /// random mutations either throw or decode to operations that re-encode to exactly the mutated bytes.
    static func checkOperationCoding(seed: UInt64, groups: Int) {
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        for group in 0..<groups {
            check.iteration = group
            var model = randomState(steps: 10, using: &generator)
            var operations: [Operation] = []
            for _ in 0..<generator.int(in: 0...6) {
                let operation = Source.operation(for: model, using: &generator)
                operations.append(operation)
                _ = try? model.apply(operation)
            }
            let bytes = Operation.encodeGroup(operations)
            do {
                let decoded = try Operation.decodeGroup(bytes)
                check.expect(decoded == operations, "\(operations) decoded as \(decoded)")
                check.expect(Operation.encodeGroup(decoded) == bytes, "\(operations) re-encode differently")
            } catch let error as CodecError {
                check.expect(false, "\(operations) did not decode: \(error)")
            } catch {
                Issue.record("threw \(error), not CodecError")
            }
            for cut in 0..<bytes.count {
                do {
                    let decoded = try Operation.decodeGroup(bytes.prefix(cut))
                    check.expect(
                        false, "the first \(cut) of \(bytes.count) bytes of \(operations) decoded as \(decoded)")
                } catch let error as CodecError {
                    check.expect(
                        error.offset >= 0 && error.offset <= cut, "offset \(error.offset) is outside the input")
                } catch {
                    Issue.record("threw \(error), not CodecError")
                }
            }
            var mutated = [UInt8](bytes)
            for _ in 0..<generator.int(in: 1...3) where !mutated.isEmpty {
                let position = generator.int(in: 0...(mutated.count - 1))
                switch generator.int(in: 0...3) {
                case 0: mutated[position] ^= UInt8(1 << generator.int(in: 0...7))
                case 1: mutated[position] = UInt8(truncatingIfNeeded: generator.next())
                case 2: mutated.insert(UInt8(truncatingIfNeeded: generator.next()), at: position)
                default: mutated.remove(at: position)
                }
            }
            do {
                let decoded = try Operation.decodeGroup(Data(mutated))
                check.expect(
                    Operation.encodeGroup(decoded) == Data(mutated),
                    "mutated bytes \(mutated) decoded as \(decoded), which re-encodes differently")
            } catch let error as CodecError {
                check.expect(!error.message.isEmpty, "an error without a message")
            } catch {
                Issue.record("threw \(error), not CodecError")
            }
            if check.shouldStop { break }
        }
    }

    /// Loading a state's snapshot gives the same state, whose snapshot is the same; the snapshot also survives the
    /// canonical binary form used for baselines and checkpoints.
    static func checkContentsRoundTrip(seed: UInt64, trials: Int, steps: Int) {
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        for trial in 0..<trials {
            check.iteration = trial
            let model = randomState(steps: steps, using: &generator)
            let contents = model.contents()
            check.expect(
                contents.isPackage == Model.documentType.isPackage, "the snapshot's form disagrees with the type")
            do {
                let loaded = try Model(contents: contents)
                check.expect(loaded == model, "\(Source.summary(model)) loaded back as \(Source.summary(loaded))")
                check.expect(
                    loaded.contents() == contents, "the reloaded \(Source.summary(model)) snapshots differently")
            } catch let error as ModelError {
                check.expect(false, "the snapshot of \(Source.summary(model)) was refused: \(error)")
            } catch {
                Issue.record("threw \(error), not ModelError")
            }
            do {
                let decoded = try DocumentContents(decoding: contents.encoded())
                check.expect(decoded == contents, "the snapshot of \(Source.summary(model)) changed in binary form")
            } catch {
                check.expect(false, "the binary form of the snapshot of \(Source.summary(model)) failed: \(error)")
            }
            if check.shouldStop { break }
        }
    }
}
