/// What one save wrote: the numbers a benchmark or an autosave log reads.
public struct SaveReport: Hashable, Sendable, CustomStringConvertible {
    /// The bytes written to files: the members rewritten plus the manifest, or the flat file.
    public var bytesWritten: Int
    /// The files rewritten (package members or the flat file; the manifest is not counted).
    public var filesWritten: Int
    /// The package members removed.
    public var filesRemoved: Int

    /// Creates a report.
    public init(bytesWritten: Int = 0, filesWritten: Int = 0, filesRemoved: Int = 0) {
        self.bytesWritten = bytesWritten
        self.filesWritten = filesWritten
        self.filesRemoved = filesRemoved
    }

    /// Whether the save found nothing to do.
    public var isEmpty: Bool { bytesWritten == 0 && filesWritten == 0 && filesRemoved == 0 }

    /// Such as "3 files written (2048 bytes), 1 removed".
    public var description: String {
        "\(filesWritten) files written (\(bytesWritten) bytes), \(filesRemoved) removed"
    }
}
