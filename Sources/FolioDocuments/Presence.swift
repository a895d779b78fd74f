import FolioCore

/// A selection in a text: a cursor when ``anchor`` equals ``head``. Positions count Unicode scalars, as
/// `TextDocument`'s operations do.
public struct TextSelection: Hashable, Sendable {
    /// Where the selection starts: the end that stays when it is extended.
    public var anchor: Int
    /// Where it ends: the cursor.
    public var head: Int

    /// A selection from `anchor` to `head`.
    public init(anchor: Int, head: Int) {
        self.anchor = anchor
        self.head = head
    }

    /// A cursor at `position`.
    public init(cursor position: Int) {
        self.init(anchor: position, head: position)
    }

    /// The selected scalars, whichever way the selection was made.
    public var range: Range<Int> { min(anchor, head)..<max(anchor, head) }
    /// Whether the selection is a cursor.
    public var isCursor: Bool { anchor == head }
}

/// Another device in an open document, as its live sync shows it (`Document.presence`): who, and where its
/// selection is in this device's text.
public struct Presence: Hashable, Sendable {
    /// The device.
    public var device: DeviceID
    /// Its name, as it gave it.
    public var name: String
    /// Its selection in the document's current text, after the characters it was placed after, whatever was typed
    /// since; `nil` while it cannot be placed: the version it was placed in has not arrived yet, or the document
    /// shows competing versions.
    public var selection: TextSelection?

    /// A device's presence.
    public init(device: DeviceID, name: String, selection: TextSelection?) {
        self.device = device
        self.name = name
        self.selection = selection
    }
}
