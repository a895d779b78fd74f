import Foundation

/// What a change does to its document.
public enum ChangeKind: Hashable, Sendable {
    /// Model operations, encoded by the document's model (opaque to the log), made as a plain edit, an undo or a redo.
    case edit(Edit)
    /// A lifecycle event: create, rename, move, delete, restore.
    case lifecycle(LifecycleEvent)
    /// A whole snapshot of the contents, encoded by the model: the first change of an imported file, or a change
    /// made on disk by another program.
    case baseline(contents: Data)
    /// The settling of competing versions; its parents are all the competing heads.
    case resolution(Resolution)
}

extension ChangeKind {
    /// A small number naming the kind (0 edit, 1 lifecycle, 2 baseline, 3 resolution), the same as its tag in the
    /// change encoding; stores use it to find changes of one kind.
    public var tag: UInt8 {
        switch self {
        case .edit: 0
        case .lifecycle: 1
        case .baseline: 2
        case .resolution: 3
        }
    }
}
