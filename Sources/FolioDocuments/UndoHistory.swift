import FolioCore
import FolioStore
import Foundation

/// A document's undo and redo stacks. An undo is itself a change carrying the inverse operations, so it syncs like
/// any edit; the stacks are this device's own bookkeeping, saved with each change that alters them so they survive
/// closing and reopening.
struct UndoHistory<Operation: DocumentOperation>: Equatable {
    /// One step: the change whose effect it reverses or restores, and the operations that do so, in order.
    struct Step: Equatable {
        var target: ChangeID
        var operations: [Operation]
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

    private func push(_ step: Step, onto stack: inout [Step]) {
        stack.append(step)
        if stack.count > Self.depthLimit { stack.removeFirst(stack.count - Self.depthLimit) }
    }

    // MARK: Persistence

    /// The key under which the history is kept in the store's local state.
    static var stateKey: LocalStateKey { LocalStateKey("undo") }

    func encoded() -> Data {
        var writer = BinaryWriter()
        writer.write(byte: 1)
        for stack in [undoSteps, redoSteps] {
            writer.write(varint: UInt64(stack.count))
            for step in stack {
                writer.write(fixed: step.target.device.uuid.high)
                writer.write(fixed: step.target.device.uuid.low)
                writer.write(varint: step.target.seq)
                writer.write(lengthPrefixed: Operation.encodeGroup(step.operations))
            }
        }
        return Data(writer.bytes)
    }

    /// Decodes a saved history; a damaged one reads as empty (losing undo history loses no edit).
    init(decoding data: Data?) {
        guard let data else { return }
        let decoded: (undo: [Step], redo: [Step])? = data.withUnsafeBytes { buffer in
            do throws(CodecError) {
                var reader = BinaryReader(buffer)
                guard try reader.nextByte("the undo format") == 1 else { return nil }
                var stacks: [[Step]] = []
                for _ in 0..<2 {
                    let count = try reader.nextCount("the step count", elementSize: 18, limit: 10_000)
                    var stack: [Step] = []
                    for _ in 0..<count {
                        let device = DeviceID(
                            UUIDBytes(high: try reader.nextFixed("a device"), low: try reader.nextFixed("a device")))
                        let seq = try reader.nextVarint("a sequence number")
                        guard seq >= 1 else { return nil }
                        let operations = try Operation.decodeGroup(
                            checking: try reader.nextLengthPrefixed("operations", limit: 1 << 28))
                        stack.append(Step(target: ChangeID(device: device, seq: seq), operations: operations))
                    }
                    stacks.append(stack)
                }
                return reader.isAtEnd ? (stacks[0], stacks[1]) : nil
            } catch {
                return nil
            }
        }
        if let decoded {
            undoSteps = decoded.undo
            redoSteps = decoded.redo
        }
    }
}

/// An open group of edits not yet committed as a change: the operations (combined where the model can) and their
/// inverses, newest last.
struct EditGroup<Model: DocumentModel> {
    private(set) var operations: [Model.Operation] = []
    private(set) var inverses: [Model.Operation] = []
    private(set) var editCount = 0

    var isEmpty: Bool { editCount == 0 }

    mutating func add(_ operation: Model.Operation, inverse: Model.Operation) {
        editCount += 1
        if let last = operations.last, let combined = Model.combine(last, operation) {
            operations[operations.count - 1] = combined
        } else {
            operations.append(operation)
        }
        // The inverse of a later edit runs before the inverses of earlier ones.
        if let last = inverses.last, let combined = Model.combine(inverse, last) {
            inverses[inverses.count - 1] = combined
        } else {
            inverses.append(inverse)
        }
    }

    /// The operations that undo the group, in the order to apply them.
    var undoOperations: [Model.Operation] { inverses.reversed() }
}
