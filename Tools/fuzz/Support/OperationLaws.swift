import FolioCore
import Foundation

/// The laws every model's operations obey, checked on one decoded group applied in order to a model.
///
/// For each operation: one that is refused leaves the model as it was; one that applies returns an inverse that
/// applies and gives the model back (the undo law), whose own inverse gives the edited model again (redo); two that
/// `combine` have the effect of both in turn. The group's encoding round-trips byte for byte, and the final model's
/// snapshot loads to an equal model.
enum OperationLaws<Model: DocumentModel & Equatable> {
    static func check(group bytes: [UInt8], from start: Model, invariants: (Model) -> Void = { _ in }) {
        guard let operations = try? Model.Operation.decodeGroup(Data(bytes)) else { return }
        let encoded = Model.Operation.encodeGroup(operations)
        require(
            Array(encoded) == bytes,
            "\(Model.self): a decoded group of \(operations.count) operations re-encodes to other bytes")
        require(
            (try? Model.Operation.decodeGroup(encoded)) == operations,
            "\(Model.self): a group does not decode to itself")

        var model = start
        var previous: (operation: Model.Operation, before: Model)?
        for operation in operations {
            let before = model
            let inverse: Model.Operation
            do {
                inverse = try model.apply(operation)
            } catch {
                require(model == before, "\(Model.self): the refused operation \(operation) changed the model")
                previous = nil
                continue
            }
            invariants(model)
            let after = model
            var undone = after
            let redo: Model.Operation
            do {
                redo = try undone.apply(inverse)
            } catch {
                oracleFailed("\(Model.self): the inverse \(inverse) of \(operation) does not apply: \(error)")
            }
            invariants(undone)
            require(
                undone == before, "\(Model.self): undoing \(operation) with \(inverse) does not give the model back")
            var redone = undone
            do {
                _ = try redone.apply(redo)
            } catch {
                oracleFailed("\(Model.self): redoing \(operation) as \(redo) does not apply: \(error)")
            }
            require(redone == after, "\(Model.self): redoing \(operation) as \(redo) does not give the edited model")
            if let previous, let combined = Model.combine(previous.operation, operation) {
                var once = previous.before
                do {
                    _ = try once.apply(combined)
                } catch {
                    oracleFailed(
                        "\(Model.self): \(previous.operation) and \(operation) combine into \(combined), which does not apply: \(error)"
                    )
                }
                require(
                    once == after,
                    "\(Model.self): \(previous.operation) then \(operation) differ from their combination \(combined)")
            }
            previous = (operation, before)
        }
        let snapshot = model.contents()
        guard let reloaded = try? Model(contents: snapshot) else {
            oracleFailed("\(Model.self): a model edited by operations does not load from its own snapshot")
        }
        require(
            reloaded == model, "\(Model.self): a model edited by operations reloads from its snapshot as another model")
    }
}
