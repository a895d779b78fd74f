import FolioCore

extension BinaryReader {
    /// Reads the two bytes that open a frame or a message: a version, which must be `version`, then a kind, which
    /// must be one of `Kind`'s. `subject` ("frame", "message"), `versionName` and `kindName` word the errors.
    ///
    /// - Throws: `CodecError`: `truncated`, `unsupportedVersion` (at offset 0), `invalidValue` (at the kind's offset).
    mutating func header<Kind: RawRepresentable>(
        version: UInt8, of subject: String, versionName: String, kindName: String, as kind: Kind.Type
    ) throws(CodecError) -> Kind where Kind.RawValue == UInt8 {
        let found = try nextByte("the \(subject)'s \(versionName)")
        guard found == version else {
            throw CodecError(
                .unsupportedVersion,
                "the \(subject) has \(versionName) \(found); this build reads version \(version)", at: 0)
        }
        let kindOffset = offset
        let raw = try nextByte("the \(subject)'s \(kindName)")
        guard let value = Kind(rawValue: raw) else {
            throw CodecError(.invalidValue, "\(raw) is not a \(subject) \(kindName)", at: kindOffset)
        }
        return value
    }

    /// Reads the two bytes that open a message of one of several versions: a version, which must be one of
    /// `versions`, then a kind; returns both.
    ///
    /// - Throws: `CodecError`: `truncated`, `unsupportedVersion` (at offset 0), `invalidValue` (at the kind's offset).
    mutating func header<Kind: RawRepresentable>(
        versions: Set<UInt8>, of subject: String, versionName: String, kindName: String, as kind: Kind.Type
    ) throws(CodecError) -> (version: UInt8, kind: Kind) where Kind.RawValue == UInt8 {
        let found = try nextByte("the \(subject)'s \(versionName)")
        guard versions.contains(found) else {
            let known = versions.sorted().map(String.init).joined(separator: " and ")
            throw CodecError(
                .unsupportedVersion,
                "the \(subject) has \(versionName) \(found); this build reads version\(versions.count > 1 ? "s" : "") \(known)",
                at: 0)
        }
        let kindOffset = offset
        let raw = try nextByte("the \(subject)'s \(kindName)")
        guard let value = Kind(rawValue: raw) else {
            throw CodecError(.invalidValue, "\(raw) is not a \(subject) \(kindName)", at: kindOffset)
        }
        return (found, value)
    }
}
