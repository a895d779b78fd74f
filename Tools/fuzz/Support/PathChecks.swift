import FolioCore
import Foundation

/// Checks of a package path by its bytes, as the file system reads it, not by its characters.
enum PathChecks {
    /// Why `text` could reach outside the directory it is joined to, or be no name at all; `nil` when it is safe.
    static func unsafety(of text: String) -> String? {
        let bytes = Array(text.utf8)
        if bytes.isEmpty { return "it is empty" }
        if bytes.first == UInt8(ascii: "/") { return "it is absolute" }
        if bytes.contains(0) { return "it holds a NUL" }
        if bytes.contains(UInt8(ascii: "\\")) { return "it holds a backslash" }
        for component in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if component.isEmpty { return "it has an empty component" }
            if component.elementsEqual([UInt8(ascii: ".")])
                || component.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")])
            {
                return "it has a '.' or '..' component, byte for byte"
            }
        }
        return nil
    }

    static func requireSafe(_ path: PackagePath, _ context: String) {
        if let problem = unsafety(of: path.description) {
            oracleFailed(
                "\(context): the package path \(path.description.debugDescription) was accepted, but \(problem)")
        }
    }
}
