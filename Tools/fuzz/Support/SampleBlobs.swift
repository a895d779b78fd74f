import FolioCore
import FolioModels
import Foundation

/// Blobs and what refers to them, for seed corpora: pages images and package members written as blob references
/// (`BinaryWriter.externalize`), as a library writes those of at least its threshold. The blobs are small (a
/// reference is 32 bytes of hash and a size whatever the blob's size), so the seeds stay small.
enum SampleBlobs {
    /// The writer's threshold: every sample blob is at least this long.
    static let threshold = 64
    /// Three blobs, of 64, 100 and 300 bytes.
    static let blobs: [Data] = [
        Data((0..<64).map { UInt8($0) }), Data(repeating: 0xB2, count: 100),
        Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
    ]
    /// Their references, ascending.
    static let references = blobs.map(BlobReference.init(to:)).sorted()

    /// A writer that writes byte strings of at least ``threshold`` bytes as blob references: images, and the
    /// package members `members` names (by default, every member).
    static func writer(members: @escaping @Sendable (PackagePath) -> Bool = { _ in true }) -> BinaryWriter {
        var writer = BinaryWriter()
        writer.blobThreshold = threshold
        writer.blobMembers = members
        return writer
    }

    /// A group of pages operations, its images of the sample blobs written as references (tag 5).
    static func pagesGroup(_ operations: [PagesDocument.Operation]) -> (bytes: Data, blobs: [BlobReference]) {
        var writer = writer()
        PagesDocument.Operation.encodeGroup(operations, into: &writer)
        return (Data(writer.bytes), writer.blobReferences)
    }

    /// Contents whose package members of at least ``threshold`` bytes that `members` names (by default, every
    /// member: the sample blobs) are written as references (package form 2).
    static func contents(
        _ contents: DocumentContents, members: @escaping @Sendable (PackagePath) -> Bool = { _ in true }
    ) -> (bytes: Data, blobs: [BlobReference]) {
        var writer = writer(members: members)
        contents.encode(into: &writer)
        return (Data(writer.bytes), writer.blobReferences)
    }

    /// A package of `inline` files and the sample blobs at `referenced` paths (`referenced[i]` holds blob `i`).
    static func package(inline: [String: Data], referenced: [String]) -> DocumentContents? {
        var files = inline
        for (index, path) in referenced.enumerated() { files[path] = blobs[index] }
        return (try? FilePackage(files: files)).map(DocumentContents.package)
    }

    /// Changes that refer to blobs, made after `history` (on its last change, in its document) by the sample
    /// devices in turn: pages edits and package baselines with one blob and with three, and a resolution of
    /// package contents with three, each listing the blobs its payload refers to.
    static func changes(after history: [Change]) -> [Change] {
        guard let last = history.last else { return [] }
        var kinds: [(ChangeKind, [BlobReference])] = []
        func edit(_ operations: [PagesDocument.Operation]) {
            let (bytes, blobs) = pagesGroup(operations)
            kinds.append((.edit(Edit(operations: bytes)), blobs))
        }
        edit([.putImage(name: "cover.png", bytes: blobs[0])])
        edit([
            .putImage(name: "a.png", bytes: blobs[1]), .setText("Pages"), .putImage(name: "b.jpg", bytes: blobs[0]),
            .putImage(name: "c/d.gif", bytes: blobs[2]), .putImage(name: "small.png", bytes: Data([1, 2])),
        ])
        if let one = package(inline: ["index.txt": Data("hello\n".utf8)], referenced: ["media/photo.jpg"]) {
            let (bytes, blobs) = contents(one)
            kinds.append((.baseline(contents: bytes), blobs))
        }
        if let three = package(inline: ["a.txt": Data("a".utf8)], referenced: ["x.bin", "m/y.bin", "m/z.bin"]) {
            let (bytes, blobs) = contents(three)
            kinds.append((.baseline(contents: bytes), blobs))
            kinds.append(
                (
                    .resolution(
                        Resolution(strategy: .custom("blobs"), chosen: [last.hash], discarded: [], contents: bytes)),
                    blobs
                ))
        }
        var changes: [Change] = []
        var vector = history.reduce(VersionVector()) { $0.merging($1.vector) }
        var lamport = history.map(\.lamport).max() ?? 0
        for (index, (kind, blobs)) in kinds.enumerated() {
            let device = index % 2 == 0 ? SampleChanges.first : SampleChanges.second
            let id = ChangeID(device: device, seq: vector[device] + 1)
            vector.include(id)
            lamport += 1
            let change = Change(
                document: last.document, id: id, parents: [(changes.last ?? last).hash], vector: vector,
                lamport: lamport, wallTime: FuzzIDs.epoch.advanced(by: Int64(lamport) * 1000), kind: kind, blobs: blobs)
            changes.append(change)
        }
        return changes
    }
}
