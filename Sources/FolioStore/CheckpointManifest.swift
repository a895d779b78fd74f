import FolioCore
import Foundation

/// How a checkpoint of a file package is stored: its large files apart, each as a blob of its own named by its
/// hash, and the rest of the package with a list of those files. A package whose images barely change between
/// checkpoints then costs each checkpoint its small files and the images that changed, not the whole package again,
/// and an image shared by several checkpoints or documents is stored once.
///
/// Binary form (store-internal; a checkpoint row names it by its `manifest_hash`):
///
/// ```
/// u8 1                                   format
/// varint n                               files stored apart, in path order
/// n × (string path, 32-byte SHA-256, varint size)
/// varint length, bytes                   DocumentContents encoding of the package without those files
/// ```
///
/// The checkpoint row keeps the hash of the whole contents (`contents_hash`): the contents put back together must
/// hash to it, so a lost or damaged part is found, never read as other contents.
struct CheckpointManifest: Hashable {
    /// A file stored apart.
    struct Member: Hashable {
        var path: PackagePath
        var hash: ContentHash
        var size: Int
    }

    /// Files at least this large are stored apart.
    static var memberThreshold: Int { 4_096 }

    /// The files stored apart, in path order.
    var members: [Member]
    /// The package without them, encoded.
    var rest: Data

    /// The manifest of `contents` (a `DocumentContents` encoding) and the bytes of the files it stores apart, or
    /// `nil` when the contents are better stored whole: not a package, no file as large as ``memberThreshold``, or
    /// bytes that do not decode or that a package would not encode back exactly.
    static func splitting(_ contents: Data) -> (manifest: CheckpointManifest, files: [ContentHash: Data])? {
        guard case .package(let package)? = try? DocumentContents(decoding: contents) else { return nil }
        var rest = package
        var members: [Member] = []
        var files: [ContentHash: Data] = [:]
        for path in package.filePaths {
            let file = package.files[path]!
            guard file.contents.count >= memberThreshold else { continue }
            _ = rest.removeFile(at: path)
            members.append(Member(path: path, hash: file.hash, size: file.contents.count))
            files[file.hash] = file.contents
        }
        guard !members.isEmpty else { return nil }
        let manifest = CheckpointManifest(members: members, rest: DocumentContents.package(rest).encoded())
        // Only a manifest that gives back these very bytes is kept.
        guard (try? manifest.assembled({ files[$0] })) == contents else { return nil }
        return (manifest, files)
    }

    /// The contents put back together, with each file stored apart read by `file` (its bytes by hash; `nil` when
    /// the store lacks it).
    ///
    /// - Throws: ``StoreError`` `corrupt` when a file is missing or is not the one named (size or hash), or the
    ///   rest is not a package.
    func assembled(_ file: (ContentHash) throws(StoreError) -> Data?) throws(StoreError) -> Data {
        guard case .package(var package)? = try? DocumentContents(decoding: rest) else {
            throw StoreError(.corrupt, "a checkpoint's manifest does not hold a package")
        }
        for member in members {
            guard let bytes = try file(member.hash), bytes.count == member.size,
                ContentHash(hashing: bytes) == member.hash
            else {
                throw StoreError(
                    .corrupt, "a checkpoint has lost or damaged its file '\(member.path)' (\(member.size) bytes)")
            }
            do {
                try package.placeFile(bytes, at: member.path)
            } catch {
                throw StoreError(.corrupt, "a checkpoint's file '\(member.path)' does not fit its package: \(error)")
            }
        }
        return DocumentContents.package(package).encoded()
    }

    /// The binary form.
    func encoded() -> Data {
        var writer = BinaryWriter()
        writer.write(byte: 1)
        writer.write(varint: UInt64(members.count))
        for member in members {
            writer.write(string: member.path.description)
            writer.write(raw: member.hash.bytes)
            writer.write(varint: UInt64(member.size))
        }
        writer.write(lengthPrefixed: rest)
        return Data(writer.bytes)
    }
}

extension CheckpointManifest {
    /// Reads the binary form.
    ///
    /// - Throws: ``StoreError`` `corrupt` when the bytes are not a manifest this build reads.
    init(decoding bytes: Data) throws(StoreError) {
        do {
            self = try BinaryReader.readingWhole(bytes, "a checkpoint manifest") { reader throws(CodecError) in
                guard try reader.nextByte("the format") == 1 else {
                    throw CodecError(.invalidValue, "a checkpoint manifest of an unknown format", at: 0)
                }
                let count = try reader.nextCount("the file count", elementSize: 34, limit: 1 << 20)
                var members: [Member] = []
                for _ in 0..<count {
                    let start = reader.offset
                    let text = try reader.nextString("a path", limit: 4_096)
                    guard let path = try? PackagePath(text) else {
                        throw CodecError(.invalidValue, "\(text.debugDescription) is not a package path", at: start)
                    }
                    let hash = ContentHash(bytes: try reader.nextRaw(32, "a file's hash"))
                    let size = try reader.nextVarint("a file's size")
                    guard size <= UInt64(Int.max) else {
                        throw CodecError(.invalidValue, "a file's size is out of range", at: start)
                    }
                    members.append(Member(path: path, hash: hash, size: Int(size)))
                }
                let rest = try reader.nextLengthPrefixed("the rest of the package", limit: Int(Int32.max))
                return CheckpointManifest(members: members, rest: rest)
            }
        } catch {
            throw StoreError(.corrupt, "a checkpoint manifest does not decode: \(error)")
        }
    }
}
