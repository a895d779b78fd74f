import FolioCore
import FolioTestWorkPool
import Foundation
import Testing

/// Package entry names are checked on their bytes and Unicode scalars, as the file system sees them, never on
/// Characters: a combining mark glued to `/` or `.` makes one Character of them, which a check per Character misses.
@Suite(.workPool) struct PackagePathTests {
    @Test(arguments: [
        "../\u{301}x",  // `/` and U+0301 are one Character: split per Character, this was one component
        "a/../\u{301}b",
        "a/..\u{301}",  // `..` with a combining mark, which a display joins into `..`
        ".\u{301}",
        "a/.\u{20DD}/b",
        "/\u{301}etc/passwd",  // absolute, although it does not start with the Character `/`
        "a\\\u{301}b",  // a backslash with a combining mark
        "a/\u{301}",
        "\u{301}a",  // starts with a combining mark
        "a//\u{301}b",
        "a/\u{1B}[2Jb",  // C0 control (ESC)
        "a\u{7F}b",  // DEL
        "a\u{9B}b",  // C1 control (CSI)
        "a\nb",
        "a\rb",
        "a\tb",
        "..\u{200B}",  // `..` with an invisible character
        "a/\u{200D}b",  // a zero-width joiner joins the `/` before it
        "a\u{600}/b",  // a prepended mark (U+0600) joins the `/` after it
    ])
    func namesThatOnlyBytesShowAreRefused(text: String) throws {
        let error = try #require(throws: PackageError.self) { try PackagePath(text) }
        #expect(error.code == .invalidPath)
    }

    @Test func aComponentLongerThanAFileSystemNameIsRefused() throws {
        let long = String(repeating: "é", count: 128)  // 256 bytes
        #expect(throws: PackageError.self) { try PackagePath("images/" + long) }
        #expect(try PackagePath("images/" + String(long.dropLast())).components.count == 2)
    }

    @Test(arguments: [
        "e\u{301}.txt", "images/cafe\u{301}.png", "a/b\u{301}/c", "...", "a..b", ".hidden", "ü/ß", "emoji 👩‍👩‍👧.png",
        "a\u{200D}b",
    ])
    func ordinaryNamesWithMarksInsideAreAccepted(text: String) throws {
        let path = try PackagePath(text)
        #expect(path.description == text)
        #expect(Array(path.description.utf8) == Array(text.utf8), "the bytes are kept as they are")
    }

    @Test func componentsAreSplitOnTheSlashByte() throws {
        // The Character after `/` is `/́`; the components are those the file system sees.
        let text = "a/\u{301}b"
        #expect(throws: PackageError.self) { try PackagePath(text) }
        let path = try PackagePath("a/b\u{301}/c")
        #expect(path.components == ["a", "b\u{301}", "c"])
    }

    /// A package from outside (a baseline's contents, a checkpoint) naming such a path is refused as it is decoded.
    @Test func decodedContentsWithAHostilePathAreRefused() throws {
        var writer = BinaryWriter()
        writer.write(byte: 1)
        writer.write(varint: 0)
        writer.write(varint: 1)
        writer.write(string: "../\u{301}x")
        writer.write(lengthPrefixed: Array("evil".utf8))
        let error = try #require(throws: CodecError.self) { try DocumentContents(decoding: Data(writer.bytes)) }
        #expect(error.code == .invalidValue)

        var directories = BinaryWriter()
        directories.write(byte: 1)
        directories.write(varint: 1)
        directories.write(string: "a/..\u{301}")
        directories.write(varint: 0)
        #expect(throws: CodecError.self) { try DocumentContents(decoding: Data(directories.bytes)) }
    }
}
