import Foundation

/// A snapshot of a document: a flat file's bytes (NSData) or a file package (NSFileWrapper).
public enum DocumentContents: Hashable, Sendable {
    /// A flat file.
    case data(Data)
    /// A directory of files.
    case package(FilePackage)

    /// Whether this is a package.
    public var isPackage: Bool {
        if case .package = self { return true }
        return false
    }

    /// The canonical binary form, used for baselines and checkpoints:
    /// `u8 0, bytes` for data; `u8 1, varint directory count, paths, varint file count, (path, bytes)…` for a
    /// package, everything in path order.
    public func encoded() -> Data {
        var writer = BinaryWriter()
        switch self {
        case .data(let data):
            writer.write(byte: 0)
            writer.write(lengthPrefixed: data)
        case .package(let package):
            writer.write(byte: 1)
            let directories = package.directories.sorted()
            writer.write(varint: UInt64(directories.count))
            for directory in directories { writer.write(string: directory.description) }
            writer.write(varint: UInt64(package.files.count))
            for path in package.filePaths {
                writer.write(string: path.description)
                writer.write(lengthPrefixed: package.files[path]!.contents)
            }
        }
        return Data(writer.bytes)
    }

    /// Decodes untrusted bytes written by ``encoded()``.
    ///
    /// - Throws: ``CodecError``, including `invalidValue` for an invalid package path.
    public init(decoding bytes: Data) throws {
        self = try BinaryReader.readingWhole(bytes, "the contents") { reader throws(CodecError) in
            try DocumentContents.decode(&reader)
        }
    }

    private static func decode(_ reader: inout BinaryReader) throws(CodecError) -> DocumentContents {
        let limit = ChangeCodec.Limits.payloadBytes
        switch try reader.nextByte("the contents' kind") {
        case 0:
            return .data(try reader.nextLengthPrefixed("the file's bytes", limit: limit))
        case 1:
            var package = FilePackage()
            let directoryCount = try reader.nextCount("the directory count", elementSize: 2, limit: 1 << 20)
            for _ in 0..<directoryCount {
                let offset = reader.offset
                let text = try reader.nextString("a directory path", limit: PackagePath.maximumLength)
                do throws(PackageError) {
                    try package.placeDirectory(PackagePath(checking: text))
                } catch {
                    throw CodecError(.invalidValue, "package directory: \(error.message)", at: offset)
                }
            }
            let fileCount = try reader.nextCount("the file count", elementSize: 2, limit: 1 << 20)
            for _ in 0..<fileCount {
                let offset = reader.offset
                let text = try reader.nextString("a file path", limit: PackagePath.maximumLength)
                let contents = try reader.nextLengthPrefixed("the bytes of '\(text)'", limit: limit)
                do throws(PackageError) {
                    try package.placeFile(contents, at: PackagePath(checking: text))
                } catch {
                    throw CodecError(.invalidValue, "package file: \(error.message)", at: offset)
                }
            }
            return .package(package)
        case let kind:
            throw CodecError(.invalidValue, "unknown contents kind \(kind)", at: reader.offset - 1)
        }
    }
}
