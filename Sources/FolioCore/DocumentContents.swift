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
    ///
    /// A package with a file written as a blob reference (a ``BlobReference/placeholder``, which always is) takes
    /// the form `u8 2`: the same, each file's path followed by `u8 0, bytes` or `u8 1, reference` (see
    /// ``encode(into:)``).
    public func encoded() -> Data {
        var writer = BinaryWriter()
        encode(into: &writer)
        return Data(writer.bytes)
    }

    /// Appends the canonical binary form; the package files that `writer` externalizes
    /// (``BinaryWriter/externalize(_:)``: placeholders, and the members its ``BinaryWriter/blobMembers`` names of at
    /// least its ``BinaryWriter/blobThreshold``) are written as blob references.
    public func encode(into writer: inout BinaryWriter) {
        switch self {
        case .data(let data):
            writer.write(byte: 0)
            writer.write(lengthPrefixed: data)
        case .package(let package):
            let paths = package.filePaths
            let references = paths.map { path in
                // Only the members the model keeps as opaque bytes (and placeholders, which only those become).
                let bytes = package.files[path]!.contents
                guard writer.blobMembers?(path) == true || BlobReference(placeholder: bytes) != nil else {
                    return BlobReference?.none
                }
                return writer.externalize(bytes)
            }
            let byReference = references.contains { $0 != nil }
            writer.write(byte: byReference ? 2 : 1)
            let directories = package.directories.sorted()
            writer.write(varint: UInt64(directories.count))
            for directory in directories { writer.write(string: directory.description) }
            writer.write(varint: UInt64(package.files.count))
            for (path, reference) in zip(paths, references) {
                writer.write(string: path.description)
                if byReference {
                    if let reference {
                        writer.write(byte: 1)
                        writer.write(reference)
                        continue
                    }
                    writer.write(byte: 0)
                }
                writer.write(lengthPrefixed: package.files[path]!.contents)
            }
        }
    }

    /// Decodes untrusted bytes written by ``encoded()``; a file written as a blob reference reads as its
    /// placeholder.
    ///
    /// - Throws: ``CodecError``, including `invalidValue` for an invalid package path.
    public init(decoding bytes: Data) throws {
        try self.init(decoding: bytes, blobs: nil)
    }

    /// Decodes untrusted bytes written by ``encode(into:)``, each file written as a blob reference read from
    /// `blobs` (its placeholder when `blobs` lacks it, noted in the lookup's ``BlobLookup/missing``).
    ///
    /// - Throws: ``CodecError``, including `invalidValue` for an invalid package path.
    public init(decoding bytes: Data, blobs: BlobLookup?) throws {
        self = try BinaryReader.readingWhole(bytes, "the contents") { reader throws(CodecError) in
            reader.blobs = blobs
            return try DocumentContents.decode(&reader)
        }
    }

    private static func decode(_ reader: inout BinaryReader) throws(CodecError) -> DocumentContents {
        let limit = ChangeCodec.Limits.payloadBytes
        switch try reader.nextByte("the contents' kind") {
        case 0:
            return .data(try reader.nextLengthPrefixed("the file's bytes", limit: limit))
        case let kind where kind == 1 || kind == 2:
            let byReference = kind == 2
            var sawReference = false
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
                let contents: Data
                var isReference = false
                let flagOffset = reader.offset
                switch byReference ? try reader.nextByte("the form of '\(text)'") : 0 {
                case 0:
                    contents = try reader.nextLengthPrefixed("the bytes of '\(text)'", limit: limit)
                    // A placeholder is written as its reference: as bytes, it is another form of the same contents.
                    guard BlobReference(placeholder: contents) == nil else {
                        throw CodecError(
                            .notCanonical, "a blob's placeholder written as the bytes of '\(text)'", at: flagOffset)
                    }
                case 1:
                    contents = reader.blob(try reader.nextBlobReference(limit: limit))
                    sawReference = true
                    isReference = true
                case let flag:
                    throw CodecError(.invalidValue, "file form \(flag) is neither 0 nor 1", at: flagOffset)
                }
                do throws(PackageError) {
                    let path = try PackagePath(checking: text)
                    try package.placeFile(contents, at: path)
                    if isReference { reader.blobs?.noteReferenced(path) }
                } catch {
                    throw CodecError(.invalidValue, "package file: \(error.message)", at: offset)
                }
            }
            guard !byReference || sawReference else {
                throw CodecError(.notCanonical, "a package without blob references takes the form 1", at: 0)
            }
            return .package(package)
        case let kind:
            throw CodecError(.invalidValue, "unknown contents kind \(kind)", at: reader.offset - 1)
        }
    }
}
