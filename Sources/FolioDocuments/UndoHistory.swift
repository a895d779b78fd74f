import FolioCore
import FolioStore
import Foundation

/// A document's undo and redo stacks. An undo is itself a change carrying the inverse operations, so it syncs like
/// any edit; the stacks are this device's own bookkeeping, saved with each change that alters them so they survive
/// closing and reopening.
///
/// A step is saved as a reference to the change whose effect it reverses, never as a copy of its operations: the
/// change's operations are in the log already, and the inverse operations follow from them and from the state the
/// change was made on, which the log replays. A step read back from the store therefore names its change only
/// (``Step/operations`` is `nil`) until the document computes its operations, when the step is used.
struct UndoHistory<Operation: DocumentOperation>: Equatable {
    /// One step: the change named by the undo or redo it makes, the change whose operations it reverses, and the
    /// operations that do so, in order.
    struct Step: Equatable {
        /// The change that an undo or redo made from this step names (`Edit.Intent`).
        var target: ChangeID
        /// The changes whose effect the step reverses, in the order they were made: the edit (or the several
        /// changes one group of edits committed while the library synced live) or the redo for an undo step, the
        /// undo for a redo step. Empty for a step that keeps its operations (one of a model that does not merge
        /// character by character whose changes were made on more than the version shown, or saved by a version
        /// that copied operations, undo format 1).
        var sources: [ChangeID]
        /// Whether each of `sources` was made on exactly the one before, the first on the version shown alone: then
        /// the step's operations are those of its edits inverted, at the positions of the text its last change made.
        /// Otherwise (other devices' changes arrived before or between them, or a merge was shown) the step is
        /// undone by taking back what its changes did in the text as it is then
        /// (`DocumentReplay.reversalEdits(of:copies:in:)`).
        var isChain: Bool
        /// The operations that reverse `sources`, in the order to apply them; `nil` until computed from the log.
        /// For a step that is not a chain, the operations on parts beside the text only count.
        var operations: [Operation]?

        /// A step reversing `sources`.
        init(target: ChangeID, sources: [ChangeID], isChain: Bool = true, operations: [Operation]?) {
            self.target = target
            self.sources = sources
            self.isChain = isChain || sources.isEmpty
            self.operations = operations
        }

        /// A step reversing one change, or none (`nil`: the step keeps its operations).
        init(target: ChangeID, source: ChangeID?, isChain: Bool = true, operations: [Operation]?) {
            self.init(target: target, sources: source.map { [$0] } ?? [], isChain: isChain, operations: operations)
        }

        /// The first change the step reverses, if it names any.
        var source: ChangeID? { sources.first }
    }

    /// The deepest history kept; older steps are dropped.
    static var depthLimit: Int { 100 }

    private(set) var undoSteps: [Step] = []
    private(set) var redoSteps: [Step] = []

    init() {}

    /// Records a new edit: it can be undone, and nothing can be redone any more.
    mutating func recordEdit(_ step: Step) {
        push(step, onto: &undoSteps)
        redoSteps.removeAll()
    }

    /// Moves the newest undo step to the redo stack as `redo`.
    mutating func recordUndo(_ redo: Step) {
        undoSteps.removeLast()
        push(redo, onto: &redoSteps)
    }

    /// Moves the newest redo step to the undo stack as `undo`.
    mutating func recordRedo(_ undo: Step) {
        redoSteps.removeLast()
        push(undo, onto: &undoSteps)
    }

    /// Gives the newest undo (or redo) step the operations computed for it.
    mutating func resolveNewest(undoing: Bool, operations: [Operation]) {
        if undoing {
            undoSteps[undoSteps.count - 1].operations = operations
        } else {
            redoSteps[redoSteps.count - 1].operations = operations
        }
    }

    private func push(_ step: Step, onto stack: inout [Step]) {
        stack.append(step)
        if stack.count > Self.depthLimit { stack.removeFirst(stack.count - Self.depthLimit) }
    }

    // MARK: Persistence

    /// The key under which the history is kept in the store's local state.
    static var stateKey: LocalStateKey { LocalStateKey("undo") }

    /// Format 2: the devices named, then each stack as its steps, a step being its target and, by reference, its
    /// source (form 0) or sources (form 2, a step of several changes), or its operations for a step that has no
    /// source (form 1, read from format 1 too); form 3 names sources that are not a chain (``Step/isChain``).
    ///
    /// ```
    /// 2, device count, devices (16 bytes each),
    /// per stack (undo, redo): step count, per step: form, target (device index, seq),
    ///     form 0: source (device index, seq) | form 1: operations (length-prefixed group)
    ///     | form 2: source count (2 or more), sources (device index, seq each)
    ///     | form 3: source count (1 or more), sources (device index, seq each)
    /// ```
    ///
    /// A version that reads fewer forms reads a history with a later one as damaged, that is as empty.
    func encoded() -> Data {
        var devices: [DeviceID] = []
        func index(of device: DeviceID) -> UInt64 {
            if let found = devices.firstIndex(of: device) { return UInt64(found) }
            devices.append(device)
            return UInt64(devices.count - 1)
        }
        var body = BinaryWriter()
        for stack in [undoSteps, redoSteps] {
            body.write(varint: UInt64(stack.count))
            for step in stack {
                let form: UInt64 =
                    step.sources.isEmpty ? 1 : !step.isChain ? 3 : step.sources.count == 1 ? 0 : 2
                body.write(varint: form)
                body.write(varint: index(of: step.target.device))
                body.write(varint: step.target.seq)
                if step.sources.isEmpty {
                    body.write(lengthPrefixed: Operation.encodeGroup(step.operations ?? []))
                } else {
                    if form != 0 { body.write(varint: UInt64(step.sources.count)) }
                    for source in step.sources {
                        body.write(varint: index(of: source.device))
                        body.write(varint: source.seq)
                    }
                }
            }
        }
        var writer = BinaryWriter()
        writer.write(byte: 2)
        writer.write(varint: UInt64(devices.count))
        for device in devices {
            writer.write(fixed: device.uuid.high)
            writer.write(fixed: device.uuid.low)
        }
        writer.write(raw: body.bytes)
        return Data(writer.bytes)
    }

    /// Decodes a saved history (format 1, which copied each step's operations, or format 2); a damaged one reads
    /// as empty (losing undo history loses no edit).
    init(decoding data: Data?) {
        guard let data else { return }
        let decoded: (undo: [Step], redo: [Step])? = data.withUnsafeBytes { buffer in
            do throws(CodecError) {
                var reader = BinaryReader(buffer)
                let stacks: [[Step]]?
                switch try reader.nextByte("the undo format") {
                case 1: stacks = try Self.decodeFormat1(&reader)
                case 2: stacks = try Self.decodeFormat2(&reader)
                default: stacks = nil
                }
                guard let stacks, reader.isAtEnd else { return nil }
                return (stacks[0], stacks[1])
            } catch {
                return nil
            }
        }
        if let decoded {
            undoSteps = decoded.undo
            redoSteps = decoded.redo
        }
    }

    /// The largest step count a saved stack may declare.
    private static var stepLimit: Int { 10_000 }
    /// The most changes one saved step may name; a step of more keeps its operations instead.
    static var sourceLimit: Int { 4_096 }

    private static func decodeFormat1(_ reader: inout BinaryReader) throws(CodecError) -> [[Step]]? {
        var stacks: [[Step]] = []
        for _ in 0..<2 {
            let count = try reader.nextCount("the step count", elementSize: 18, limit: stepLimit)
            var stack: [Step] = []
            for _ in 0..<count {
                let device = DeviceID(
                    UUIDBytes(high: try reader.nextFixed("a device"), low: try reader.nextFixed("a device")))
                let seq = try reader.nextVarint("a sequence number")
                guard seq >= 1 else { return nil }
                let operations = try Operation.decodeGroup(
                    checking: try reader.nextLengthPrefixed("operations", limit: 1 << 28))
                stack.append(Step(target: ChangeID(device: device, seq: seq), source: nil, operations: operations))
            }
            stacks.append(stack)
        }
        return stacks
    }

    private static func decodeFormat2(_ reader: inout BinaryReader) throws(CodecError) -> [[Step]]? {
        let deviceCount = try reader.nextCount("the device count", elementSize: 16, limit: 2 * stepLimit)
        var devices: [DeviceID] = []
        for _ in 0..<deviceCount {
            devices.append(
                DeviceID(UUIDBytes(high: try reader.nextFixed("a device"), low: try reader.nextFixed("a device"))))
        }
        func changeID() throws(CodecError) -> ChangeID? {
            let index = try reader.nextVarint("a device index")
            let seq = try reader.nextVarint("a sequence number")
            guard index < UInt64(devices.count), seq >= 1 else { return nil }
            return ChangeID(device: devices[Int(index)], seq: seq)
        }
        var stacks: [[Step]] = []
        for _ in 0..<2 {
            let count = try reader.nextCount("the step count", elementSize: 5, limit: stepLimit)
            var stack: [Step] = []
            for _ in 0..<count {
                let form = try reader.nextVarint("a step's form")
                guard form <= 3, let target = try changeID() else { return nil }
                if form == 0 {
                    guard let source = try changeID() else { return nil }
                    stack.append(Step(target: target, source: source, operations: nil))
                } else if form == 2 || form == 3 {
                    let count = try reader.nextCount("a step's source count", elementSize: 2, limit: sourceLimit)
                    guard count >= (form == 2 ? 2 : 1) else { return nil }
                    var sources: [ChangeID] = []
                    for _ in 0..<count {
                        guard let source = try changeID() else { return nil }
                        sources.append(source)
                    }
                    stack.append(Step(target: target, sources: sources, isChain: form == 2, operations: nil))
                } else {
                    let operations = try Operation.decodeGroup(
                        checking: try reader.nextLengthPrefixed("operations", limit: 1 << 28))
                    stack.append(Step(target: target, source: nil, operations: operations))
                }
            }
            stacks.append(stack)
        }
        return stacks
    }
}

/// An open group of edits not yet committed as a change: the operations and their inverses as they were made. An
/// edit only appends; the operations and the inverses are combined (``DocumentModel/combined(_:)``) every few
/// thousand edits (so a long group holds about what its combined operations take) and when the group is read (once
/// per commit), and the operations, once the group holds as many edits as its limit, as far as needed to count them.
struct EditGroup<Model: DocumentModel> {
    /// The operations of the group's first edits, combined.
    private var combinedPrefix: [Model.Operation] = []
    /// The operations of the edits after those, as made.
    private var pending: [Model.Operation] = []
    /// The inverses of the first edits' operations, in chunks (oldest first), each in undo order and combined.
    private var inverseChunks: [[Model.Operation]] = []
    /// The inverses of the edits after those, as made.
    private var pendingInverses: [Model.Operation] = []
    // The counts are kept apart from the arrays: in a generic document, asking an array of the model's operations
    // for its count looks up the array type's metadata, which is most of what an edit would cost.
    /// The number of edits in the group.
    private(set) var editCount = 0
    private var combinedPrefixCount = 0
    private var pendingCount = 0
    private var pendingInverseCount = 0

    /// Whether some of the group's edits were committed as changes before the group ended (``takeUncommitted()``).
    private(set) var hasCommittedEdits = false
    /// Once some were: the inverses of the edits not yet committed (what ``uncommittedUndoOperations`` reads), the
    /// first ones in chunks (oldest first), each in undo order and combined, the later ones as made; before, those
    /// are all the group's inverses.
    private var uncommittedInverseChunks: [[Model.Operation]] = []
    private var uncommittedInverses: [Model.Operation] = []
    private var uncommittedInverseCount = 0

    /// How many edits wait uncombined at most.
    static var pendingLimit: Int { 4_096 }

    var isEmpty: Bool { editCount == 0 }

    /// Whether edits of the group wait to be committed as a change.
    var hasUncommittedEdits: Bool { combinedPrefixCount + pendingCount > 0 }

    mutating func add(_ operation: Model.Operation, inverse: Model.Operation) {
        pending.append(operation)
        pendingInverses.append(inverse)
        editCount += 1
        pendingCount += 1
        pendingInverseCount += 1
        if pendingCount >= Self.pendingLimit { combinePending() }
        if pendingInverseCount >= Self.pendingLimit { chunkPendingInverses() }
        if hasCommittedEdits {
            uncommittedInverses.append(inverse)
            uncommittedInverseCount += 1
            if uncommittedInverseCount >= Self.pendingLimit {
                uncommittedInverseChunks.append(Model.combined(uncommittedInverses.reversed()))
                uncommittedInverses.removeAll()
                uncommittedInverseCount = 0
            }
        }
    }

    /// Marks the edits not yet committed as committed (their operations, ``operations``, are now a change): the group
    /// stays open, one undo step whose inverses still undo all its edits.
    mutating func markUncommittedCommitted() {
        combinedPrefix.removeAll()
        pending.removeAll()
        combinedPrefixCount = 0
        pendingCount = 0
        uncommittedInverseChunks.removeAll()
        uncommittedInverses.removeAll()
        uncommittedInverseCount = 0
        hasCommittedEdits = true
    }

    /// The operations that undo the edits not yet committed, in the order to apply them: what takes the model back
    /// to the group's last committed change (to the state the group was made on while none is).
    var uncommittedUndoOperations: [Model.Operation] {
        guard hasCommittedEdits else { return undoOperations }
        // The newest first: the edits after the chunks, then the chunks from the newest.
        return Model.combined(uncommittedInverses.reversed() + uncommittedInverseChunks.reversed().flatMap { $0 })
    }

    /// Whether the group's operations, combined, number at least `limit`. Combines what was not combined yet only
    /// when the edits since the last count could reach the limit, so an edit of a group below its limit costs no
    /// combining.
    mutating func holds(atLeast limit: Int) -> Bool {
        guard combinedPrefixCount + pendingCount >= limit else { return false }
        combinePending()
        return combinedPrefixCount >= limit
    }

    /// Folds the pending operations into the combined prefix: only its last operation can combine with them.
    private mutating func combinePending() {
        guard pendingCount > 0 else { return }
        var run = pending
        if let last = combinedPrefix.popLast() { run.insert(last, at: 0) }
        combinedPrefix += Model.combined(run)
        combinedPrefixCount = combinedPrefix.count
        pending.removeAll()
        pendingCount = 0
    }

    /// Combines the pending inverses into a chunk of their own.
    private mutating func chunkPendingInverses() {
        guard pendingInverseCount > 0 else { return }
        inverseChunks.append(Model.combined(pendingInverses.reversed()))
        pendingInverses.removeAll()
        pendingInverseCount = 0
    }

    /// The group's operations not yet committed, combined where the model can.
    var operations: [Model.Operation] {
        var group = self
        group.combinePending()
        return group.combinedPrefix
    }

    /// The operations that undo the group, in the order to apply them (the inverse of a later edit runs before the
    /// inverses of earlier ones), combined where the model can.
    var undoOperations: [Model.Operation] {
        var group = self
        group.chunkPendingInverses()
        if group.inverseChunks.count == 1 { return group.inverseChunks[0] }
        return Model.combined(group.inverseChunks.reversed().flatMap { $0 })
    }
}
