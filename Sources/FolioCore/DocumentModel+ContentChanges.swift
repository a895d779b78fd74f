extension DocumentModel {
    /// How this state differs from `ancestor`; the built-in models list lines, fields or members. This default,
    /// for models that say nothing finer, reports the whole contents as changed when they differ.
    public func changes(from ancestor: Self) -> [ContentChange] {
        let before = ancestor.contents()
        let after = contents()
        guard before != after else { return [] }
        return [
            ContentChange(
                location: "contents", kind: .changed, base: [Self.summary(before)], version: [Self.summary(after)])
        ]
    }

    private static func summary(_ contents: DocumentContents) -> String {
        let bytes = contents.encoded()
        return "\(bytes.count) bytes, sha256 \(ContentHash(hashing: bytes).hex.prefix(12))"
    }
}
