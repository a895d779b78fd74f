// pages-operations: a group of pages operations decoded from untrusted bytes, under the undo law.
// A group of `PagesDocument.Operation`s decoded from untrusted bytes (an edit's payload) and
// applied to a package with an image. Oracles: `OperationLaws`, every image's path in the snapshot is safe byte
// for byte, and the text storage's own invariants.
import FolioCore
import FolioModels
import Foundation

enum Harness {
    static let start: PagesDocument = {
        do {
            return try PagesDocument(text: "Pagés 🌍\n", images: ["cover.png": Data([1, 2, 3])])
        } catch {
            fatalError("cannot make the starting pages: \(error)")
        }
    }()

    static func run(_ input: UnsafeRawBufferPointer) {
        OperationLaws<PagesDocument>.check(group: Array(input), from: start) { model in
            model.storage._checkInvariants()
            guard case .package(let package) = model.contents() else {
                oracleFailed("pages do not snapshot as a package")
            }
            for path in package.filePaths { PathChecks.requireSafe(path, "an image of the pages") }
        }
    }

    static func seeds() -> [[UInt8]] {
        typealias Op = PagesDocument.Operation
        let groups: [[Op]] = [
            [.setText("new"), .setText("newer")],
            [.putImage(name: "b.jpg", bytes: Data([9])), .putImage(name: "b.jpg", bytes: Data([8, 7]))],
            [.removeImage(name: "cover.png"), .putImage(name: "cover.png", bytes: Data())],
            [
                .putImage(name: "../x", bytes: Data()), .putImage(name: "e\u{301}.png", bytes: Data([1])),
                .removeImage(name: "é.png"),
            ],
            [.insertText(at: 0, text: "a"), .insertText(at: 1, text: "b"), .deleteText(at: 1, count: 1)],
            [.deleteText(at: 5, count: 1), .deleteText(at: 4, count: 1), .insertText(at: 8, text: "e\u{301}")],
            [.setText("new"), .insertText(at: 3, text: "er"), .deleteText(at: -1, count: 1)],
            [.insertText(at: 100, text: "x"), .deleteText(at: 0, count: Int.max)],
        ]
        var seeds = groups.map { Array(Op.encodeGroup($0)) }
        // Images written as blob references (tag 5), which decode to the blobs' placeholders.
        let blobs = SampleBlobs.blobs
        let blobGroups: [[Op]] = [
            [.putImage(name: "photo.png", bytes: blobs[0])],
            [
                .putImage(name: "cover.png", bytes: blobs[2]), .putImage(name: "cover.png", bytes: blobs[1]),
                .removeImage(name: "cover.png"), .putImage(name: "cover.png", bytes: Data([4])),
            ],
            [
                .putImage(name: "a.png", bytes: blobs[0]), .insertText(at: 2, text: "x"),
                .putImage(name: "b.png", bytes: blobs[0]),
            ],
        ]
        seeds += blobGroups.map { Array(SampleBlobs.pagesGroup($0).bytes) }
        return seeds
    }
}
