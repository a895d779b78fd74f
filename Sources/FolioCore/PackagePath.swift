import Foundation

/// A validated path inside a file package: relative, `/`-separated, with no empty, `.` or `..` components, no NUL,
/// backslash or control character, so that joining it to the package root can never land outside the root.
///
/// The checks read the UTF-8 bytes and Unicode scalars the file system sees, never Characters: a combining mark
/// after `/` makes one Character of the two (`"../\u{301}x"` is the Characters `.`, `.`, `/́`, `x`), which a check
/// per Character would not see as a separator. For the same reason a component may not start with a mark or joiner
/// that would join the `/` before it, nor end with one that would join the `/` after it, and a component that shows
/// as `.` or `..` (dots with only marks or invisible characters beside them) is refused like `.` and `..`.
public struct PackagePath: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The path's components, each non-empty.
    public let components: [String]

    /// The longest accepted path, in UTF-8 bytes.
    public static let maximumLength = 1024
    /// The longest accepted component, in UTF-8 bytes (`NAME_MAX` of Linux and most file systems).
    public static let maximumComponentLength = 255

    /// Validates `text`.
    ///
    /// - Throws: ``PackageError`` with code `invalidPath` naming what is wrong.
    public init(_ text: String) throws {
        try self.init(checking: text)
    }

    /// The typed core of ``init(_:)``, for the package's own code.
    package init(checking text: String) throws(PackageError) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw PackageError(.invalidPath, "a package entry name is empty") }
        guard bytes.count <= Self.maximumLength else {
            throw PackageError(.invalidPath, "package entry name is longer than \(Self.maximumLength) bytes")
        }
        guard bytes[0] != Self.slash else {
            throw PackageError(.invalidPath, "package entry '\(text)' is an absolute path")
        }
        guard !bytes.contains(0) else { throw PackageError(.invalidPath, "package entry name contains a NUL byte") }
        guard !bytes.contains(Self.backslash) else {
            throw PackageError(.invalidPath, "package entry '\(text)' contains a backslash")
        }
        var parts: [String] = []
        for part in bytes.split(separator: Self.slash, omittingEmptySubsequences: false) {
            guard !part.isEmpty else {
                throw PackageError(.invalidPath, "package entry '\(text)' has an empty component")
            }
            // Cut at an ASCII byte, each part is valid UTF-8 on its own.
            let component = String(decoding: part, as: UTF8.self)
            try Self.check(component, byteCount: part.count, in: text)
            parts.append(component)
        }
        components = parts
    }

    private static let slash = UInt8(ascii: "/")
    private static let backslash = UInt8(ascii: "\\")

    /// Refuses a component the file system, a terminal or a reader per Character would take for something else.
    private static func check(_ component: String, byteCount: Int, in text: String) throws(PackageError) {
        guard byteCount <= maximumComponentLength else {
            throw PackageError(
                .invalidPath, "package entry '\(text)' has a component longer than \(maximumComponentLength) bytes")
        }
        if let control = component.unicodeScalars.first(where: isControl) {
            let code = "U+" + String(control.value, radix: 16, uppercase: true).leftPadded(to: 4)
            throw PackageError(.invalidPath, "package entry name contains the control character \(code)")
        }
        guard !looksLikeDots(component) else {
            throw PackageError(.invalidPath, "package entry '\(text)' has a '\(component)' component")
        }
        // Between two separators, the component's first and last Characters must be its own: otherwise a mark at
        // its start (or a prepended one at its end) joins a `/`, and the separator disappears for anyone who reads
        // the path per Character.
        let bounded = "/" + component + "/"
        guard bounded.first == "/" && bounded.last == "/" else {
            throw PackageError(
                .invalidPath,
                "package entry '\(text)' has a component that starts or ends with a combining mark or joiner")
        }
    }

    /// C0 and C1 controls and DEL: never part of a name a person reads, and escape sequences to a terminal.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Whether `component` is one or two dots once marks and invisible characters are left out (`..` followed by
    /// U+0301, say), so that it shows as `.` or `..`.
    private static func looksLikeDots(_ component: String) -> Bool {
        var dots = 0
        for scalar in component.unicodeScalars {
            if scalar == "." {
                dots += 1
                if dots > 2 { return false }
                continue
            }
            let properties = scalar.properties
            switch properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark, .format: continue
            default: if properties.isDefaultIgnorableCodePoint { continue }
            }
            return false
        }
        return dots > 0
    }

    /// The path as text, such as `images/cover.png`.
    public var description: String { components.joined(separator: "/") }

    /// The last component.
    public var name: String { components[components.count - 1] }

    /// The directories above this entry, outermost first (`a`, `a/b` for `a/b/c`).
    public var ancestors: [PackagePath] {
        (1..<components.count).map { count in
            // Prefixes of a valid path are valid.
            try! PackagePath(checking: components[0..<count].joined(separator: "/"))
        }
    }

    /// Orders by components, so a directory's entries sort together.
    public static func < (lhs: PackagePath, rhs: PackagePath) -> Bool {
        lhs.components.lexicographicallyPrecedes(rhs.components)
    }
}

extension String {
    /// The text with zeros in front, up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
