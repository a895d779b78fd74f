import Foundation

/// What a change does, in a run's columns. The `kind` column says which form each change takes:
///
/// ```
/// 0  a plain edit, its operations as they are          op lengths: varint; operations: the bytes
/// 1  anything else: the kind's canonical encoding      other kinds: varint length and the bytes
///    (with the change's list of blobs, when it has one: a change that refers to blobs always takes this form)
/// 2  a resolution                                      resolutions: see below
/// 3  a plain edit whose operations are in text form    text edits, text tags, text positions, text lengths, text
/// ```
///
/// A resolution is its strategy's tag (and a custom strategy's name, length-prefixed), then its chosen heads (varint
/// 0: exactly the change's parents; n > 0: n − 1 references), its discarded heads (a varint count and references)
/// and its contents (u8 0 for none, or 1, a varint length and the bytes).
///
/// Operations are in text form when they read as a group of text insertions and deletions as the text models write
/// them (a varint count of at least 1, then per operation a tag byte 0 with a varint position, a varint length and
/// that many bytes, or a tag byte 1 with a varint position and a varint count) and nothing else. Then the count goes
/// to `text edits`, each tag to `text tags`, each position, as the difference from the position its device's
/// previous text operation ended at, to `text positions` (signed; an insertion ends at its position plus the
/// scalars it inserts, a deletion at its position), each length or count to `text lengths`, and the inserted bytes
/// to `text`, one after the other, so that typing compresses as text. The form is only a way to store the bytes:
/// writing the group again from the columns gives the very bytes it was read from, whatever model wrote them.
extension ChangeRunCodec {
    /// The forms a change's kind takes; `editOnMerge` and `textEditOnMerge` (an `edit` or `textEdit` made on a merge,
    /// `Edit.isMadeOnMerge`) exist from format 2 on.
    fileprivate enum KindForm: UInt8 {
        case edit = 0, other = 1, resolution = 2, textEdit = 3, editOnMerge = 4, textEditOnMerge = 5
    }
    fileprivate enum TextTag: UInt8 { case insert = 0, delete = 1 }

    /// A text operation as its group holds it.
    fileprivate struct TextOperation {
        var tag: TextTag
        /// The position's varint, the bit pattern of a signed position.
        var position: UInt64
        /// An insertion's byte length or a deletion's count.
        var length: UInt64
        /// An insertion's bytes.
        var text: UnsafeRawBufferPointer?
    }

    /// The bytes' text operations, or `nil` when they are not exactly a group of them.
    fileprivate static func textOperations(_ buffer: UnsafeRawBufferPointer) -> [TextOperation]? {
        var reader = BinaryReader(buffer)
        guard let count = try? reader.nextVarint("the count"), count >= 1, count <= UInt64(buffer.count) else {
            return nil
        }
        var operations: [TextOperation] = []
        operations.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let raw = try? reader.nextByte("a tag"), let tag = TextTag(rawValue: raw),
                let position = try? reader.nextVarint("a position"), let length = try? reader.nextVarint("a length")
            else { return nil }
            var text: UnsafeRawBufferPointer?
            if tag == .insert {
                guard length <= UInt64(reader.remaining), let bytes = try? reader.nextBuffer(Int(length), "the text")
                else { return nil }
                text = bytes
            }
            operations.append(TextOperation(tag: tag, position: position, length: length, text: text))
        }
        return reader.isAtEnd ? operations : nil
    }

    /// The number of scalars in UTF-8 bytes: the bytes that do not continue a scalar (a prediction only; invalid
    /// UTF-8 counts the same way on both sides).
    fileprivate static func scalarCount(_ bytes: UnsafeRawBufferPointer) -> Int64 {
        Int64(bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) })
    }
}

extension ChangeRunCodec.RunEncoder {
    private typealias Form = ChangeRunCodec.KindForm

    /// Writes what `change` does to the kind columns.
    mutating func appendKind(
        of change: Change, device: Int, parents: [ChangeStamp], outside: (ChangeHash) -> ChangeStamp?
    ) {
        guard change.blobs.isEmpty else { return appendOther(change.kind, blobs: change.blobs) }
        switch change.kind {
        case .edit(let edit) where edit.intent == .edit:
            if edit.isMadeOnMerge { usesMergeForms = true }
            let isText = edit.operations.withUnsafeBytes { buffer in
                guard let operations = ChangeRunCodec.textOperations(buffer) else { return false }
                appendText(operations, device: device, onMerge: edit.isMadeOnMerge)
                return true
            }
            if !isText {
                columns[.kind].write(byte: (edit.isMadeOnMerge ? Form.editOnMerge : Form.edit).rawValue)
                columns[.opLengths].write(varint: UInt64(edit.operations.count))
                columns[.operations].write(raw: edit.operations)
            }
        case .resolution(let resolution):
            let named = (resolution.chosen + resolution.discarded).map { stamp($0, outside: outside) }
            if named.allSatisfy({ $0 != nil }) {
                appendResolution(resolution, parents: change.parents, stamps: named.map { $0! })
            } else {
                appendOther(change.kind, blobs: [])
            }
        default:
            appendOther(change.kind, blobs: [])
        }
    }

    private mutating func appendOther(_ kind: ChangeKind, blobs: [BlobReference]) {
        // An undo or redo made on a merge: its intent byte is format 2's.
        if case .edit(let edit) = kind, edit.isMadeOnMerge { usesMergeForms = true }
        columns[.kind].write(byte: Form.other.rawValue)
        var bytes = BinaryWriter(capacity: 64)
        ChangeCodec.encodeKind(kind, blobs: blobs, into: &bytes)
        columns[.otherKinds].write(lengthPrefixed: bytes.bytes)
    }

    private mutating func appendText(_ operations: [ChangeRunCodec.TextOperation], device: Int, onMerge: Bool) {
        columns[.kind].write(byte: (onMerge ? Form.textEditOnMerge : Form.textEdit).rawValue)
        columns[.textEdits].write(varint: UInt64(operations.count))
        for operation in operations {
            columns[.textTags].write(byte: operation.tag.rawValue)
            let position = Int64(bitPattern: operation.position)
            columns[.textPositions].write(signed: position &- (textEnd[device] ?? 0))
            columns[.textLengths].write(varint: operation.length)
            if let text = operation.text {
                columns[.text].write(raw: text)
                textEnd[device] = position &+ ChangeRunCodec.scalarCount(text)
            } else {
                textEnd[device] = position
            }
        }
    }

    /// `stamps`: the chosen heads', then the discarded heads'.
    private mutating func appendResolution(_ resolution: Resolution, parents: [ChangeHash], stamps: [ChangeStamp]) {
        columns[.kind].write(byte: Form.resolution.rawValue)
        ChangeCodec.write(resolution.strategy, into: &columns[.resolutions])
        if resolution.chosen == parents {
            columns[.resolutions].write(varint: 0)
        } else {
            columns[.resolutions].write(varint: UInt64(resolution.chosen.count) + 1)
            for stamp in stamps.prefix(resolution.chosen.count) { write(reference: stamp.id, to: .resolutions) }
        }
        columns[.resolutions].write(varint: UInt64(resolution.discarded.count))
        for stamp in stamps.dropFirst(resolution.chosen.count) { write(reference: stamp.id, to: .resolutions) }
        if let contents = resolution.contents {
            columns[.resolutions].write(byte: 1)
            columns[.resolutions].write(lengthPrefixed: contents)
        } else {
            columns[.resolutions].write(byte: 0)
        }
    }
}

extension ChangeRunCodec.RunDecoder {
    private typealias Form = ChangeRunCodec.KindForm

    /// Reads what change `id` of `device`, made on `parents`, does, and the blobs it refers to (into `blobs`,
    /// emptied first; only the form `other` lists any).
    mutating func readKind(
        of id: ChangeID, device: Int, parents: [ChangeStamp], outside: (ChangeID) -> ChangeStamp?,
        blobs: inout [BlobReference]
    ) throws(CodecError) -> ChangeKind {
        blobs.removeAll()
        let offset = offset(.kind)
        let raw = try columns[.kind].nextByte("a change's kind")
        guard let form = Form(rawValue: raw), format >= 2 || (form != .editOnMerge && form != .textEditOnMerge) else {
            throw CodecError(.invalidValue, "unknown kind form \(raw) in a run of format \(format)", at: offset)
        }
        switch form {
        case .edit, .editOnMerge:
            if form == .editOnMerge { sawMergeForm = true }
            let lengthOffset = self.offset(.opLengths)
            let length = try columns[.opLengths].nextVarint("the length of an edit's operations")
            guard length <= UInt64(ChangeCodec.Limits.payloadBytes) else {
                throw CodecError(
                    .oversized, "an edit's operations are \(length) bytes, more than the limit", at: lengthOffset)
            }
            return .edit(
                Edit(
                    operations: Data(try columns[.operations].nextBuffer(Int(length), "an edit's operations")),
                    isMadeOnMerge: form == .editOnMerge))
        case .other:
            let kindOffset = self.offset(.otherKinds)
            let length = try columns[.otherKinds].nextCount(
                "the length of a change's kind", elementSize: 1, limit: ChangeCodec.Limits.payloadBytes)
            var reader = BinaryReader(try columns[.otherKinds].nextBuffer(length, "a change's kind"))
            let kind = try ChangeCodec.decodeKind(&reader, blobs: &blobs)
            guard reader.isAtEnd else {
                throw CodecError(.trailingBytes, "\(reader.remaining) bytes follow a change's kind", at: kindOffset)
            }
            if case .edit(let edit) = kind, edit.isMadeOnMerge {
                guard format >= 2 else {
                    throw CodecError(.invalidValue, "an edit made on a merge in a run of format 1", at: kindOffset)
                }
                sawMergeForm = true
            }
            return kind
        case .resolution:
            return .resolution(try readResolution(of: id, parents: parents, outside: outside))
        case .textEdit, .textEditOnMerge:
            if form == .textEditOnMerge { sawMergeForm = true }
            return .edit(Edit(operations: try readText(device: device), isMadeOnMerge: form == .textEditOnMerge))
        }
    }

    private mutating func readText(device: Int) throws(CodecError) -> Data {
        let countOffset = offset(.textEdits)
        let count = try columns[.textEdits].nextVarint("the number of text operations")
        guard count >= 1, count <= UInt64(columns[.textTags].remaining) else {
            throw CodecError(
                .invalidValue, "a text edit has \(count) operations, for \(columns[.textTags].remaining) tags left",
                at: countOffset)
        }
        // Written into the decode's buffer for groups, kept from change to change (the empty writer swapped in
        // holds no storage).
        var group = BinaryWriter(capacity: 0)
        swap(&group, &self.group)
        defer { swap(&group, &self.group) }
        group.removeAll()
        group.write(varint: count)
        for _ in 0..<count {
            let tagOffset = offset(.textTags)
            let raw = try columns[.textTags].nextByte("a text operation's tag")
            guard let tag = ChangeRunCodec.TextTag(rawValue: raw) else {
                throw CodecError(.invalidValue, "unknown text operation tag \(raw)", at: tagOffset)
            }
            let position = textEnd[device] &+ (try columns[.textPositions].nextSigned("a text position"))
            let lengthOffset = offset(.textLengths)
            let length = try columns[.textLengths].nextVarint("a text operation's length")
            group.write(byte: raw)
            group.write(varint: UInt64(bitPattern: position))
            group.write(varint: length)
            switch tag {
            case .insert:
                guard length <= UInt64(ChangeCodec.Limits.payloadBytes) else {
                    throw CodecError(.oversized, "an inserted text of \(length) bytes", at: lengthOffset)
                }
                let text = try columns[.text].nextBuffer(Int(length), "an inserted text")
                group.write(raw: text)
                textEnd[device] = position &+ ChangeRunCodec.scalarCount(text)
            case .delete:
                textEnd[device] = position
            }
            guard group.bytes.count <= ChangeCodec.Limits.payloadBytes else {
                throw CodecError(.oversized, "a text edit is larger than the limit", at: lengthOffset)
            }
        }
        return Data(group.bytes)
    }

    private mutating func readResolution(
        of id: ChangeID, parents: [ChangeStamp], outside: (ChangeID) -> ChangeStamp?
    ) throws(CodecError) -> Resolution {
        let tagOffset = offset(.resolutions)
        let raw = try columns[.resolutions].nextByte("a resolution's strategy")
        guard let tag = ChangeCodec.StrategyTag(rawValue: raw) else {
            throw CodecError(.invalidValue, "unknown resolution strategy \(raw)", at: tagOffset)
        }
        let strategy = try tag.strategy { () throws(CodecError) -> String in
            try columns[.resolutions].nextString("a custom strategy's name", limit: ChangeCodec.Limits.textBytes)
        }
        let chosenOffset = offset(.resolutions)
        let chosenFlag = try columns[.resolutions].nextVarint("a resolution's chosen heads")
        var chosen: [ChangeHash]
        if chosenFlag == 0 {
            chosen = parents.map(\.hash)
        } else {
            chosen = try readHashes(chosenFlag - 1, at: chosenOffset, of: id, outside: outside)
        }
        let discardedOffset = offset(.resolutions)
        let discardedCount = try columns[.resolutions].nextVarint("a resolution's discarded heads")
        let discarded = try readHashes(discardedCount, at: discardedOffset, of: id, outside: outside)
        chosen.sort()
        let flagOffset = offset(.resolutions)
        let contents: Data?
        switch try columns[.resolutions].nextByte("a resolution's contents flag") {
        case 0: contents = nil
        case 1:
            contents = try columns[.resolutions].nextLengthPrefixed(
                "a resolution's contents", limit: ChangeCodec.Limits.payloadBytes)
        case let flag:
            throw CodecError(.invalidValue, "contents flag \(flag) is neither 0 nor 1", at: flagOffset)
        }
        return Resolution(strategy: strategy, chosen: chosen, discarded: discarded, contents: contents)
    }

    /// Reads `count` references from the resolutions column: strictly ascending hashes once sorted.
    private mutating func readHashes(
        _ count: UInt64, at offset: Int, of id: ChangeID, outside: (ChangeID) -> ChangeStamp?
    ) throws(CodecError) -> [ChangeHash] {
        // A reference takes at least two bytes.
        guard count <= UInt64(columns[.resolutions].remaining / 2) else {
            throw CodecError(.truncated, "\(count) heads cannot fit in the resolutions left", at: offset)
        }
        var hashes: [ChangeHash] = []
        for _ in 0..<count {
            hashes.append(try readReference(from: .resolutions, naming: "resolved head", of: id, outside: outside).hash)
        }
        hashes.sort()
        guard zip(hashes, hashes.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw CodecError(.notCanonical, "change \(id)'s resolution names a head twice", at: offset)
        }
        return hashes
    }
}
