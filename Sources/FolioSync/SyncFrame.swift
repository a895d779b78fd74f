import FolioCore

/// One frame of the sync protocol over a connection to a server (a WebSocket binary message): a session's message on
/// a channel, the server's notice that a document's log grew, a device's presence in a document, or what the connection
/// may sync.
///
/// A connection carries any number of sessions, each on a channel the client numbers (its session number). The
/// server answers on the channel the message came on. It also sends a ``notice(document:vector:)`` whenever its log of a
/// document grows: to the device whose changes made it grow, as the acknowledgement that they are stored, and to every
/// other connected device of the library, with the changes themselves on that device's channel, so that it learns of
/// them without polling. docs/protocol.md describes the bytes.
public enum SyncFrame: Hashable, Sendable {
    /// The bytes of a ``SyncMessage`` on `channel` (decoded separately, with ``SyncMessage/init(decoding:)``).
    case message(channel: UInt64, bytes: [UInt8])
    /// The server's log of `document` is at `vector`: everything in it is stored.
    case notice(document: DocumentID, vector: VersionVector)
    /// What `device` shows others of itself in `document` (its cursor and selection, as a `PresenceState`'s
    /// bytes), or, empty, that it shows nothing there any more. Ephemeral: the server relays it to the library's
    /// other connected devices that read presence and never stores it (docs/protocol.md, "Presence").
    case presence(document: DocumentID, device: DeviceID, state: [UInt8])
    /// What the connection may sync (``SyncScope``): the server's first frame to a client that said at the upgrade
    /// that it reads scope frames (``SyncScope/header``), and only to such a client.
    case scope(SyncScope)

    /// The framing's version, written first in every frame; a reader refuses versions it does not know. The message
    /// inside a `message` frame carries its own version (``SyncMessage/formatVersion``).
    public static let wireVersion: UInt8 = 1

    /// The largest frame a peer accepts: a `changes` message of ``SyncSession/Limits/bytesPerMessage`` (4 MiB)
    /// with its framing and heads fits well within it.
    public static let maximumBytes = 16 << 20

    /// The most bytes of a presence frame's state that any peer accepts (a server may accept fewer:
    /// `ServerLimits.presenceBytes`).
    public static let maximumPresenceBytes = 4_096

    /// The HTTP header of a WebSocket upgrade request in which a client says it reads presence frames (`1`); a
    /// server sends them only to such a client.
    public static let presenceHeader = "Folio-Presence"

    /// What a server that relays presence sends a client that reads it, after the client's hello and before any
    /// other presence: a presence frame naming no document and no device (all-zero identities), empty. A client sends
    /// presence only once it has seen it: a server from before presence closes a connection that sends any (1002).
    public static let presenceWelcome = SyncFrame.presence(
        document: DocumentID(UUIDBytes(high: 0, low: 0)), device: DeviceID(UUIDBytes(high: 0, low: 0)), state: [])

    /// What a server sends first on a connection whose token may only read (`read` role): a notice naming no
    /// document (all-zero identity) and an empty vector. A client that sees it sends no change and no blob (the
    /// server would close the connection, 4405); a client from before it reads it as a notice of no document.
    public static let readOnlyNotice = SyncFrame.notice(
        document: DocumentID(UUIDBytes(high: 0, low: 0)), vector: VersionVector())

    private enum Kind: UInt8 {
        case message = 0
        case notice = 1
        case presence = 2
        case scope = 3
    }

    /// The frame's bytes: the wire version, the kind, then the fields.
    public func encoded() -> [UInt8] {
        var writer = BinaryWriter(capacity: 32)
        writer.write(byte: Self.wireVersion)
        switch self {
        case .message(let channel, let bytes):
            writer.write(byte: Kind.message.rawValue)
            writer.write(fixed: channel)
            writer.write(raw: bytes)
        case .notice(let document, let vector):
            writer.write(byte: Kind.notice.rawValue)
            writer.write(id: document.uuid)
            writer.write(vector: vector)
        case .presence(let document, let device, let state):
            writer.write(byte: Kind.presence.rawValue)
            writer.write(id: document.uuid)
            writer.write(id: device.uuid)
            writer.write(raw: state)
        case .scope(let scope):
            writer.write(byte: Kind.scope.rawValue)
            scope.write(into: &writer)
        }
        return writer.bytes
    }

    /// Frames `message` on `channel` without an intermediate copy of its fields.
    public static func encode(_ message: SyncMessage, on channel: UInt64) -> [UInt8] {
        SyncFrame.message(channel: channel, bytes: message.encoded()).encoded()
    }

    /// Decodes untrusted bytes written by ``encoded()``. The message inside a `message` frame is not decoded.
    ///
    /// - Throws: `CodecError`: `oversized` past ``maximumBytes``, `unsupportedVersion`, `truncated`, `invalidValue`
    ///   (an unknown kind, an empty message, a scope's documents out of order or a flag other than 0 or 1),
    ///   `trailingBytes` after a notice or a scope, `oversized` for a presence state past ``maximumPresenceBytes`` or
    ///   a scope of more than ``SyncScope/maximumDocuments`` documents, or the vector's own decoding error.
    public init(decoding bytes: some Collection<UInt8>) throws {
        guard bytes.count <= Self.maximumBytes else {
            throw CodecError(
                .oversized, "the frame has \(bytes.count) bytes; at most \(Self.maximumBytes) are accepted", at: 0)
        }
        let array = Array(bytes)
        self = try BinaryReader.reading(array) { reader throws(CodecError) in
            let kind = try reader.header(
                version: Self.wireVersion, of: "frame", versionName: "wire version", kindName: "kind", as: Kind.self)
            switch kind {
            case .message:
                let channel = try reader.nextFixed("the frame's channel")
                guard !reader.isAtEnd else {
                    throw CodecError(.invalidValue, "the frame carries no message", at: reader.offset)
                }
                return .message(channel: channel, bytes: Array(array[reader.offset...]))
            case .notice:
                let document = DocumentID(try reader.readID("the notice's document"))
                let vector = try reader.readVector("the notice's vector")
                guard reader.isAtEnd else {
                    throw CodecError(.trailingBytes, "\(reader.remaining) bytes follow the notice", at: reader.offset)
                }
                return .notice(document: document, vector: vector)
            case .presence:
                let document = DocumentID(try reader.readID("the presence's document"))
                let device = DeviceID(try reader.readID("the presence's device"))
                guard reader.remaining <= Self.maximumPresenceBytes else {
                    throw CodecError(
                        .oversized,
                        "the presence state has \(reader.remaining) bytes; at most \(Self.maximumPresenceBytes) are "
                            + "accepted", at: reader.offset)
                }
                return .presence(document: document, device: device, state: Array(array[reader.offset...]))
            case .scope:
                let scope = try SyncScope.read(from: &reader)
                guard reader.isAtEnd else {
                    throw CodecError(.trailingBytes, "\(reader.remaining) bytes follow the scope", at: reader.offset)
                }
                return .scope(scope)
            }
        }
    }
}
