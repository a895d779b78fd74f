import FolioCore
import Foundation

/// A text with images, saved as a file package.
///
/// The package holds `text.txt` (the text, UTF-8), `images/NAME` (one file per image) and `Info.json`, deterministic
/// JSON describing the package: `{"formatVersion":1,"generator":"Folio","images":["cover.png"]}` (keys sorted, image
/// names sorted by Unicode scalars, a trailing newline). Equality compares the text and the image names scalar by
/// scalar, and the images' bytes.
///
/// The text lives in a ``TextStorage`` gap buffer, as a ``TextDocument``'s does, so typing into it (`insertText`,
/// `deleteText`) costs time proportional to the edit, not to the text's length. Positions count Unicode scalars.
public struct PagesDocument: DocumentModel, Hashable, Sendable {
    /// Pages (`com.folio.pages`, conforming to `com.apple.package`), extension `folio-pages`, a file package.
    public static let documentType = DocumentType.pages

    /// The package layout version this build writes and reads (`formatVersion` in `Info.json`).
    public static let formatVersion = 1

    /// What `Info.json` names as the package's writer.
    public static let generator = "Folio"

    /// The text's scalars.
    public private(set) var storage: TextStorage
    /// The images' bytes, by name.
    public private(set) var images: [String: Data]

    /// No text and no images.
    public init() {
        storage = TextStorage()
        images = [:]
    }

    /// A document with this text and these images.
    ///
    /// - Throws: `ModelError` `invalidContents` when an image name is not valid (``isValidImageName(_:)``).
    public init(text: String, images: [String: Data] = [:]) throws {
        for name in images.keys.sorted(by: { $0.precedesByScalars($1) }) where !Self.isValidImageName(name) {
            throw ModelError(.invalidContents, "\(name.debugDescription) is not a valid image name")
        }
        storage = TextStorage(text)
        self.images = images
    }

    /// The text.
    ///
    /// - Complexity: O(*n*): it is assembled from the storage on each access.
    public var text: String { storage.string }

    /// The number of Unicode scalars in the text: the largest valid insertion position.
    ///
    /// - Complexity: O(1).
    public var scalarCount: Int { storage.count }

    /// Images are blobs: `images/NAME` members (see `DocumentModel.isBlobMember(_:)`); the text and `Info.json` are
    /// always written whole.
    public static func isBlobMember(_ path: PackagePath) -> Bool {
        path.components.count == 2 && path.components[0] == imagesDirectory
    }

    /// Images are blobs.
    public static var hasBlobMembers: Bool { true }

    /// The image names, sorted by Unicode scalars.
    public var imageNames: [String] { images.keys.sorted { $0.precedesByScalars($1) } }

    /// Whether `name` can name an image: one valid package path component (not empty, `.` or `..`, without `/`,
    /// backslash or NUL) that also fits in a package path below `images/`.
    public static func isValidImageName(_ name: String) -> Bool {
        guard let path = try? PackagePath(name), path.components.count == 1 else { return false }
        return (try? PackagePath("images/" + name)) != nil
    }

    // MARK: Snapshots

    private static let textPath = "text.txt"
    private static let infoPath = "Info.json"
    private static let imagesDirectory = "images"

    /// The package: `text.txt`, `Info.json`, the `images` directory (present even when empty) and one file per
    /// image.
    public func contents() -> DocumentContents {
        let names = imageNames
        let info = JSONValue.object(sorting: [
            "formatVersion": .integer(Self.formatVersion),
            "generator": .string(Self.generator),
            "images": .array(names.map { .string($0) }),
        ])
        var package = FilePackage()
        // The paths are constants and validated names, and no two can conflict, so these cannot fail.
        try! package.setFile(Data(text.utf8), at: PackagePath(Self.textPath))
        try! package.setFile(Data(info.serialized.utf8), at: PackagePath(Self.infoPath))
        try! package.addDirectory(PackagePath(Self.imagesDirectory))
        for name in names {
            try! package.setFile(images[name]!, at: PackagePath(Self.imagesDirectory + "/" + name))
        }
        return .package(package)
    }

    /// Loads a package written by ``contents()``.
    ///
    /// The `images` directory may be missing when there are no images. Files outside `text.txt`, `Info.json` and
    /// `images/` are ignored (a save pipeline may keep its own bookkeeping in the package).
    ///
    /// - Throws: `ModelError` `invalidContents` for flat data; a missing or non-UTF-8 `text.txt`; a missing or
    ///   malformed `Info.json`, or one whose `formatVersion` is not ``formatVersion``; a file nested below
    ///   `images/NAME` or with an invalid name; or an `Info.json` image list that differs from the image files.
    public init(contents: DocumentContents) throws {
        func invalid(_ message: String) -> ModelError {
            ModelError(.invalidContents, "the pages package is not valid: \(message)")
        }
        guard case .package(let package) = contents else {
            throw ModelError(.invalidContents, "a pages document is a file package, not a flat file")
        }
        guard let infoFile = package[Self.infoPath] else { throw invalid("it has no \(Self.infoPath)") }
        guard let infoText = String(validating: infoFile.contents, as: UTF8.self) else {
            throw invalid("\(Self.infoPath) is not UTF-8")
        }
        let info: JSONValue
        do throws(JSONValue.ParseError) {
            info = try JSONValue(parsing: infoText)
        } catch {
            throw invalid("\(Self.infoPath) is not JSON: \(error.message)")
        }
        guard let members = info.members else { throw invalid("\(Self.infoPath) is not a JSON object") }
        guard case .integer(let version)? = members["formatVersion"] else {
            throw invalid("\(Self.infoPath) has no integer formatVersion")
        }
        guard version == Self.formatVersion else {
            throw invalid("formatVersion \(version) is not supported (this build reads \(Self.formatVersion))")
        }
        guard members.count == 3, case .string? = members["generator"], case .array(let listed)? = members["images"]
        else {
            throw invalid(
                "\(Self.infoPath) must hold exactly formatVersion, generator (a string) and images (an array)")
        }
        var listedNames: [String] = []
        for entry in listed {
            guard case .string(let name) = entry else {
                throw invalid("\(Self.infoPath) lists an image name that is not a string")
            }
            listedNames.append(name)
        }

        guard let textFile = package[Self.textPath] else { throw invalid("it has no \(Self.textPath)") }
        guard let text = String(validating: textFile.contents, as: UTF8.self) else {
            throw invalid("\(Self.textPath) is not UTF-8")
        }

        var images: [String: Data] = [:]
        for path in package.filePaths where path.components[0] == Self.imagesDirectory {
            guard path.components.count == 2 else {
                throw invalid("'\(path)' is not an image: images are files directly in \(Self.imagesDirectory)/")
            }
            let name = path.components[1]
            guard Self.isValidImageName(name) else {
                throw invalid("\(name.debugDescription) is not a valid image name")
            }
            images[name] = package.files[path]!.contents
        }
        let names = images.keys.sorted { $0.precedesByScalars($1) }
        guard names.count == listedNames.count, zip(names, listedNames).allSatisfy({ $0.isIdentical(to: $1) }) else {
            throw invalid("\(Self.infoPath) lists images \(listedNames) but the package holds \(names)")
        }
        storage = TextStorage(text)
        self.images = images
    }

    // MARK: Editing

    /// Applies one edit and returns the edit that undoes it.
    ///
    /// Inverses: `insertText` → `deleteText` of what was inserted; `deleteText` → `insertText` of the removed text;
    /// `setText` → `setText` of the old text; `putImage` over an existing image → `putImage` of its old bytes, over
    /// none → `removeImage`; `removeImage` → `putImage` of the removed bytes.
    ///
    /// - Complexity: O(*m* + *d*) for `insertText` and `deleteText` (*m* scalars edited, *d* the distance from the
    ///   previous edit), O(*n*) for `setText`, O(1) on average for the images.
    /// - Throws: `ModelError` `invalidOperation` when a position or count of `insertText` or `deleteText` is negative
    ///   or past the end of the text, `putImage` has an invalid name or `removeImage` names an image that does not
    ///   exist; the document is then unchanged.
    public mutating func apply(_ operation: Operation) throws -> Operation {
        switch operation {
        case .insertText(let position, let text):
            return .deleteText(at: position, count: try storage.insertChecked(text, at: position))
        case .deleteText(let position, let count):
            return .insertText(at: position, text: try storage.removeChecked(count, at: position))
        case .setText(let newText):
            let old = storage.string
            storage.replaceAll(with: newText)
            return .setText(old)
        case .putImage(let name, let bytes):
            guard Self.isValidImageName(name) else {
                throw ModelError(.invalidOperation, "\(name.debugDescription) is not a valid image name")
            }
            // Replace in place when the image exists, so its stored name (and thus the inverse) stays exact.
            if let slot = images.index(forKey: name) {
                let (storedName, old) = images[slot]
                images.values[slot] = bytes
                return .putImage(name: storedName, bytes: old)
            }
            images[name] = bytes
            return .removeImage(name: name)
        case .removeImage(let name):
            guard let slot = images.index(forKey: name) else {
                throw ModelError(.invalidOperation, "there is no image named \(name.debugDescription) to remove")
            }
            let (storedName, old) = images.remove(at: slot)
            return .putImage(name: storedName, bytes: old)
        }
    }

    /// Combines repeated edits of one thing, and consecutive typing and deleting into one edit (as
    /// ``TextDocument/combine(_:_:)`` does), so a burst of keystrokes becomes one operation.
    ///
    /// - `insertText(at: p, s)` then `insertText(at: p + |s|, t)` → `insertText(at: p, s + t)` (typing on);
    /// - `deleteText(at: p, n)` then `deleteText(at: p - m, m)` → `deleteText(at: p - m, n + m)` (backspacing);
    /// - `deleteText(at: p, n)` then `deleteText(at: p, m)` → `deleteText(at: p, n + m)` (forward deleting);
    /// - `setText(a)` then `setText(b)` → `setText(b)`;
    /// - `putImage(n, a)` then `putImage(n, b)` → `putImage(n, b)`.
    ///
    /// The result applies exactly when both do, with the same effect. Any other pair gives `nil`.
    public static func combine(_ first: Operation, _ second: Operation) -> Operation? {
        switch (first, second) {
        case (.insertText(let p, let s), .insertText(let q, let t)):
            // The text's own rules, so that typing combines the same way in both models.
            guard
                case .insert(let position, let text)? = TextDocument.combine(
                    .insert(at: p, text: s), .insert(at: q, text: t))
            else { return nil }
            return .insertText(at: position, text: text)
        case (.deleteText(let p, let n), .deleteText(let q, let m)):
            guard
                case .delete(let position, let count)? = TextDocument.combine(
                    .delete(at: p, count: n), .delete(at: q, count: m))
            else { return nil }
            return .deleteText(at: position, count: count)
        case (.setText, .setText(let text)):
            return .setText(text)
        case (.putImage(let name, _), .putImage(let otherName, let bytes))
        where name == otherName && isValidImageName(name) && isValidImageName(otherName):
            return .putImage(name: name, bytes: bytes)
        default:
            return nil
        }
    }

    // MARK: Equality

    /// Whether both have the same text and images, texts and names compared scalar for scalar.
    public static func == (lhs: PagesDocument, rhs: PagesDocument) -> Bool {
        guard lhs.storage == rhs.storage, lhs.images.count == rhs.images.count else { return false }
        return zip(lhs.imageNames, rhs.imageNames).allSatisfy { left, right in
            left.isIdentical(to: right) && lhs.images[left] == rhs.images[right]
        }
    }

    /// Hashes the text's scalars and the images.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage)
        hasher.combine(images)
    }
}
