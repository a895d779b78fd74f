import FolioCore
import FolioMerge
import Foundation

extension PagesDocument: MergeableDocumentModel {
    /// Merges versions member by member: the text line by line (`Diff3`), the images by name (`FieldMerge`).
    ///
    /// Text conflicts are at `text.txt, lines 3–5` (lines of `base`, 1-based), with the first version's lines kept.
    /// An image added, replaced or removed in one version is taken; the same bytes put in several versions are taken
    /// once; different bytes under one name conflict at `images/NAME` (the first editing version's bytes are kept);
    /// an image replaced in one version and removed in another is kept with the new bytes. Conflicting images are
    /// described by ``imageSummary(_:)``, never by their bytes. Text conflicts come first, then images by name.
    ///
    /// - Precondition: `versions` is not empty.
    /// - Complexity: O(*V* · (*N* + *M*) · *D*) for the text (see `Diff3`) plus comparing the images' bytes.
    public static func merge(base: PagesDocument, versions: [PagesDocument]) -> MergeResult<PagesDocument> {
        let text = Diff3.merge(base: base.text, versions: versions.map(\.text))
        let images = FieldMerge.merge(base: base.images, versions: versions.map(\.images))
        var conflicts = text.mergeConflicts(locationPrefix: "\(textMember), ")
        for conflict in images.conflicts {
            conflicts.append(
                MergeConflict(
                    location: "\(imagesMember)/\(conflict.key)",
                    base: conflict.base.map(imageSummary),
                    values: conflict.values.map { $0.map(imageSummary) }))
        }
        // Every image name comes from a valid document, so the merged document is valid too.
        let merged = try! PagesDocument(text: text.text, images: images.merged)
        return MergeResult(merged: merged, conflicts: conflicts)
    }

    /// How this document differs from `base`, member by member: what a conflict report shows for a competing version.
    ///
    /// - Complexity: O((*N* + *M*) · *D*) for the text (see `LineDiff`) plus comparing the images' bytes.
    public func difference(from base: PagesDocument) -> Difference {
        Difference(
            text: TextDiff(base: base.text, version: text),
            images: FieldMerge.changes(from: base.images, to: images))
    }

    /// How reports and conflicts name an image's bytes: `1234 bytes, sha256 1a2b3c4d5e6f` (the first 12 hex digits).
    ///
    /// - Complexity: O(*n*) in the bytes.
    public static func imageSummary(_ bytes: Data) -> String {
        "\(bytes.count) bytes, sha256 \(ContentHash(hashing: bytes).hex.prefix(12))"
    }

    /// The package member that holds the text, as conflict locations name it.
    static let textMember = "text.txt"
    /// The package directory that holds the images, as conflict locations name it.
    static let imagesMember = "images"
}

extension PagesDocument: CharacterMergeable {
    /// The text's scalars.
    ///
    /// - Complexity: O(*n*).
    public var mergeableText: [Unicode.Scalar] { storage.scalars }
    /// The text's scalar count, without building the text.
    public var mergeableTextCount: Int { storage.count }

    /// This document with `text`, and the same images.
    public func replacingMergeableText(with text: String) -> PagesDocument {
        // The images come from a valid document.
        try! PagesDocument(text: text, images: images)
    }

    /// The text operation of each text edit (an append is an insert at the end).
    public static func textOperation(_ edit: TextEdit) -> Operation? {
        switch edit {
        case .insert(let position, let scalars):
            .insertText(at: position, text: String(String.UnicodeScalarView(scalars)))
        case .append:
            // The text's length is the model's: an append is not made without it.
            nil
        case .delete(let position, let count): .deleteText(at: position, count: count)
        case .replaceAll(let scalars): .setText(String(String.UnicodeScalarView(scalars)))
        }
    }

    /// Text operations are edits (`setText` the edit of the part that differs, `TextEdit.replaceAll(with:)`);
    /// image operations apply to the document in the replay's order.
    public static func textEdits(of operation: Operation) -> [TextEdit]? {
        switch operation {
        case .insertText(let position, let text): [.insert(at: position, text: text)]
        case .deleteText(let position, let count): [.delete(at: position, count: count)]
        case .setText(let text): [.replaceAll(with: Array(text.unicodeScalars))]
        case .putImage, .removeImage: nil
        }
    }

    /// The images.
    public static var hasPartsBesideText: Bool { true }

    /// The text's member first, as in the line merge: `text.txt, line 3, characters 5–8`.
    public static func textConflictLocation(_ location: String) -> String { "\(textMember), \(location)" }

    /// This document with every image `new` puts, replaces or removes relative to `old` changed the same way, and
    /// its other images kept.
    ///
    /// - Complexity: O(*i*) image comparisons for *i* names in `old` and `new`.
    public func applyingOtherParts(changedFrom old: PagesDocument, to new: PagesDocument) -> PagesDocument {
        var images = self.images
        for name in Set(old.images.keys).union(new.images.keys) where old.images[name] != new.images[name] {
            images[name] = new.images[name]
        }
        // Every name comes from a valid document.
        return try! PagesDocument(text: text, images: images)
    }

    /// Whether two versions put different bytes under one image name, or one replaced an image another removed.
    public static func otherPartsDiverge(base: PagesDocument, versions: [PagesDocument]) -> Bool {
        var names = Set(base.images.keys)
        for version in versions { names.formUnion(version.images.keys) }
        for name in names {
            var changed: [Data?] = []
            for version in versions where version.images[name] != base.images[name] {
                if !changed.contains(version.images[name]) { changed.append(version.images[name]) }
            }
            if changed.count > 1 { return true }
        }
        return false
    }
}
