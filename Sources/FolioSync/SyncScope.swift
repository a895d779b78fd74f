import FolioCore

/// What a connection to a server may sync, as its token grants it: the whole library, or single documents of it,
/// each to read only or to read and write (docs/protocol.md, "Scope").
///
/// A server tells a client that reads scope frames (``SyncScope/header`` at the upgrade) its scope in the first
/// frame of the connection (``SyncFrame/scope(_:)``). A client then neither announces, offers nor takes a document
/// outside it, and sends no change of a document it may only read: the server would close the connection (4406 for
/// a document outside the scope, 4405 for one it may only read).
public enum SyncScope: Hashable, Sendable {
    /// The whole library; `writes`: the connection may send changes and blobs.
    case library(writes: Bool)
    /// These documents only, each with whether the connection may write it.
    case documents([DocumentID: Bool])

    /// The HTTP header of a WebSocket upgrade request in which a client says it reads scope frames (`1`). A server
    /// refuses a token that grants single documents to a client that does not (it would offer the others).
    public static let header = "Folio-Scope"

    /// The most documents a scope names; a frame naming more does not decode.
    public static let maximumDocuments = 4_096

    /// Whether the connection may sync `document` at all.
    public func includes(_ document: DocumentID) -> Bool {
        switch self {
        case .library: true
        case .documents(let documents): documents[document] != nil
        }
    }

    /// Whether the connection may send changes of `document`.
    public func writes(_ document: DocumentID) -> Bool {
        switch self {
        case .library(let writes): writes
        case .documents(let documents): documents[document] ?? false
        }
    }

    /// Whether the connection may write anything: a document, or the library.
    public var writesAny: Bool {
        switch self {
        case .library(let writes): writes
        case .documents(let documents): documents.values.contains(true)
        }
    }

    /// The documents named that the connection may write, ascending; empty for the whole library.
    public var writableDocuments: [DocumentID] {
        switch self {
        case .library: []
        case .documents(let documents): documents.filter(\.value).keys.sorted()
        }
    }

    /// The documents named, ascending; empty for the whole library.
    public var documents: [DocumentID] {
        switch self {
        case .library: []
        case .documents(let documents): documents.keys.sorted()
        }
    }

    /// Writes the scope: a byte for its form (0: the library, 1: documents), then for the library a byte saying
    /// whether it writes, for documents their count (a varint) and each document, ascending, followed by a byte
    /// saying whether it writes.
    func write(into writer: inout BinaryWriter) {
        switch self {
        case .library(let writes):
            writer.write(byte: 0)
            writer.write(byte: writes ? 1 : 0)
        case .documents(let documents):
            writer.write(byte: 1)
            writer.write(varint: UInt64(documents.count))
            for document in documents.keys.sorted() {
                writer.write(id: document.uuid)
                writer.write(byte: documents[document]! ? 1 : 0)
            }
        }
    }

    /// Reads what ``write(into:)`` wrote, from untrusted bytes: at most ``maximumDocuments`` documents, in strictly
    /// ascending order (one spelling of each scope), each flag 0 or 1.
    static func read(from reader: inout BinaryReader) throws(CodecError) -> SyncScope {
        func flag(_ what: String) throws(CodecError) -> Bool {
            let offset = reader.offset
            switch try reader.nextByte(what) {
            case 0: return false
            case 1: return true
            case let other: throw CodecError(.invalidValue, "\(what) is \(other), not 0 or 1", at: offset)
            }
        }
        let offset = reader.offset
        switch try reader.nextByte("the scope's form") {
        case 0:
            return .library(writes: try flag("the scope's write flag"))
        case 1:
            let count = try reader.nextCount(
                "the scope's documents", elementSize: 17, limit: maximumDocuments)
            var documents: [DocumentID: Bool] = [:]
            var previous: DocumentID?
            for _ in 0..<count {
                let at = reader.offset
                let document = DocumentID(try reader.readID("a scope's document"))
                if let previous, document <= previous {
                    throw CodecError(.invalidValue, "the scope's documents are not in ascending order", at: at)
                }
                previous = document
                documents[document] = try flag("a scope document's write flag")
            }
            return .documents(documents)
        case let other:
            throw CodecError(.invalidValue, "the scope's form is \(other), not 0 or 1", at: offset)
        }
    }
}
