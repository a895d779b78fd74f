import Foundation

/// The attributes of an item on disk.
public struct FileAttributes: Hashable, Sendable {
    /// What the item is.
    public var kind: FileItemKind
    /// The size in bytes.
    public var size: Int
    /// When the contents last changed.
    public var modificationDate: Date
    /// The item's serial number on its device (the inode): the same while the item exists under any name, different
    /// for an item made in its place; 0 when the file system has none.
    public var fileNumber: UInt64

    /// Creates attributes.
    public init(kind: FileItemKind, size: Int, modificationDate: Date, fileNumber: UInt64 = 0) {
        self.kind = kind
        self.size = size
        self.modificationDate = modificationDate
        self.fileNumber = fileNumber
    }
}
