import FolioCore
import FolioMerge

/// This device's selection in an open text document, and the other devices' as they arrive (``Document/presence``).
///
/// A selection is published with the version it was made in (its heads) and positions in that version's text. A
/// receiver places it in its own text by replaying that history with the positions as marks
/// (`DocumentReplay.markedPositions(_:in:)`), so a cursor stays after the character it followed whatever was typed
/// since on any device; its own edits then move the places they shift, and any other move of its text places them
/// again.
struct PresenceTracking {
    /// Another device: what it published, and where that is in the current text (`nil` while it cannot be placed).
    struct Remote {
        var state: PresenceState
        var selection: TextSelection?
        /// When the state was last heard (milliseconds since 1970, by the library's clock), the same or new.
        var heard: Int64
    }

    /// How long, in milliseconds, another device's state lasts without being heard again: a device sends its state
    /// again every `PresenceBoard.renewal` (10 s) while its connection lasts, so a state older than this belongs to a
    /// device whose leaving was never heard of (its server process was killed, or the frame that said so was
    /// dropped for a reader behind). It goes then, as if the device had cleared it.
    static var timeout: Int64 { 30_000 }

    /// This device's selection, waiting for its edits to be committed before it is published (its positions are in
    /// the current text, which the published version's heads must name).
    var waiting: TextSelection?
    /// Whether this device published a selection it has not cleared.
    var published = false
    /// The other devices, by device.
    var remote: [DeviceID: Remote] = [:]

    /// How many changes behind the version shown a selection's version may be to be placed (a longer way is not
    /// replayed: the selection shows as not placed until its device sends it again).
    static var placementDistance: UInt64 { 1_024 }

    /// The shortest time, in milliseconds, between two placements that replay history, where a timer runs.
    static var placementInterval: Int64 { 100 }
    /// When the others' selections were last placed (milliseconds since 1970, by the library's clock).
    var lastPlacement: Int64?
    /// When a placement put off is due.
    var placementDue: Int64?
}

extension Document where Model: CharacterMergeable {
    /// Shows the other devices of the library where this device's selection is (a cursor, when empty), while the
    /// library syncs live (`startSyncing(with:token:)`); `nil` shows nothing any more. Positions count Unicode
    /// scalars of ``model``'s text as it is now.
    ///
    /// Others see it at the characters it is placed after, wherever those move. Presence is never stored: the server
    /// relays it to the library's connected devices only, and it ends when this device disconnects or the document
    /// closes. A selection made while edits wait to be committed leaves with them (within
    /// ``AutosavePolicy/liveCommitDelay``). Set it again when the selection moves: others see the latest, at most 20
    /// times a second.
    ///
    /// - Throws: ``DocumentError`` `.invalidOperation` when a position is past the end of the text, `.closed`.
    public func setSelection(_ selection: TextSelection?) throws(DocumentError) {
        try ensureOpen()
        guard let selection else {
            presenceTracking.waiting = nil
            leavePresence()
            return
        }
        let count = model.mergeableTextCount
        guard (0...count).contains(selection.anchor), (0...count).contains(selection.head) else {
            throw DocumentError(
                .invalidOperation,
                "the selection \(selection.anchor)–\(selection.head) is outside the text of \(count) scalars")
        }
        presenceTracking.waiting = selection
        publishWaitingSelection()
    }

    /// The other devices in the document, by device: who, and where their selections are in the current text. A
    /// device leaves the list when it clears its selection or disconnects, and at the latest 30 s after its state was
    /// last heard (a live sync sends it again every 10 s), should word of its leaving be lost.
    public var others: [Presence] { presenceList() }
}

extension Document {
    /// Publishes the selection waiting for a commit, once no edit waits any more.
    func publishWaitingSelection() {
        guard let selection = presenceTracking.waiting, !editing.group.hasUncommittedEdits else { return }
        presenceTracking.waiting = nil
        let heads = shownHeads()
        guard heads.count <= PresenceState.maximumHeads else {
            // Too many versions shown at once to name: nothing is shown rather than a place others cannot find.
            leavePresence()
            return
        }
        let state = PresenceState(
            name: library.device.name, heads: heads.map(\.hash), anchor: selection.anchor, head: selection.head)
        presenceTracking.published = true
        library.presenceOutlet(state.encoded(), in: id)
    }

    /// Stops showing this device in the document.
    func leavePresence() {
        guard presenceTracking.published else { return }
        presenceTracking.published = false
        library.presenceOutlet([], in: id)
    }

    /// The heads whose state (or silent merge) the model shows before the open group; a merged head the log lacks
    /// is left out.
    func shownHeads() -> [Change] {
        guard let merge = tracking.mergeShown(at: head.hash) else { return [head] }
        var heads = [head]
        for hash in merge.others {
            if let change = try? tracking.headStates[hash]?.change ?? library.store.change(hash, of: id) {
                heads.append(change)
            }
        }
        return heads
    }

    /// Takes another device's state in this document (empty: it left), heard at `heard` (milliseconds since 1970,
    /// by the library's clock; now when `nil`).
    func receivePresence(_ bytes: [UInt8], from device: DeviceID, heard: Int64? = nil) {
        guard Model.self is any CharacterMergeable.Type, !state.contains(.closed) else { return }
        if bytes.isEmpty {
            guard presenceTracking.remote.removeValue(forKey: device) != nil else { return }
        } else {
            // A state that does not decode is passed over, as if never sent.
            guard let decoded = try? PresenceState(decoding: bytes) else { return }
            let heard = heard ?? library.clock.now().millisecondsSince1970
            // Heard again unchanged (a renewal): it lasts longer, nothing moved.
            if let known = presenceTracking.remote[device], known.state == decoded {
                presenceTracking.remote[device]?.heard = max(known.heard, heard)
                return
            }
            let previous = presenceTracking.remote[device]?.selection
            let wasEmpty = presenceTracking.remote.isEmpty
            presenceTracking.remote[device] = .init(state: decoded, selection: previous, heard: heard)
            // The first state shown sets the timer's deadline for the expiry (later ones expire after it).
            if wasEmpty, timer.isRunning { timer.wake(for: heard + PresenceTracking.timeout) }
            if Set(decoded.heads) == Set(shownHeads().map(\.hash)) || !library.runsBackgroundWork {
                // Made in the version shown: placed at once, at no cost (or placed at once where no timer runs).
                placePresence(of: [device])
            } else {
                // Placing it replays history: with the others, at most once per placement interval.
                placePresence()
                return
            }
        }
        announcePresence()
    }

    /// The earliest time another device's state expires (see ``PresenceTracking/timeout``), if any is shown.
    var presenceExpiry: Int64? {
        presenceTracking.remote.values.map(\.heard).min().map { $0 + PresenceTracking.timeout }
    }

    /// Drops the other devices' states not heard again within ``PresenceTracking/timeout`` of `now`, and announces
    /// the list when one went.
    func expirePresence(now: Int64) {
        let expired = presenceTracking.remote.filter { now - $0.value.heard >= PresenceTracking.timeout }.keys
        guard !expired.isEmpty else { return }
        for device in expired { presenceTracking.remote[device] = nil }
        announcePresence()
    }

    func forgetPresence() {
        guard !presenceTracking.remote.isEmpty else { return }
        presenceTracking.remote = [:]
        announcePresence()
    }

    /// Sends the list of other devices to ``presence``.
    func announcePresence() {
        presenceContinuation.yield(presenceList())
    }

    /// The other devices, by device, as ``Document/others`` lists them.
    func presenceList() -> [Presence] {
        presenceTracking.remote.keys.sorted().map { device in
            let remote = presenceTracking.remote[device]!
            return Presence(device: device, name: remote.state.name, selection: remote.selection)
        }
    }

    /// Places the other devices' selections in the current text again (the model moved other than by an edit made
    /// here), and announces them.
    ///
    /// A document whose due work runs on its timer places them at most once per ``PresenceTracking/placementInterval``:
    /// sooner, its timer places them when the interval ends (under ten-way typing, each device would otherwise replay
    /// history for every keystroke and every cursor that arrives). Meanwhile edits made here still move them.
    func placePresence() {
        guard !presenceTracking.remote.isEmpty else { return }
        if library.runsBackgroundWork {
            let now = library.clock.now().millisecondsSince1970
            if let last = presenceTracking.lastPlacement, now - last < PresenceTracking.placementInterval {
                if presenceTracking.placementDue == nil {
                    let due = last + PresenceTracking.placementInterval
                    presenceTracking.placementDue = due
                    if timer.isRunning { timer.wake(for: due) }
                }
                return
            }
            presenceTracking.lastPlacement = now
        }
        presenceTracking.placementDue = nil
        placePresence(of: presenceTracking.remote.keys.sorted())
        announcePresence()
    }

    /// Places the others' selections when a placement put off by ``placePresence()`` is due.
    func placePresenceIfDue(now: Int64) {
        guard let due = presenceTracking.placementDue, due <= now else { return }
        presenceTracking.placementDue = nil
        presenceTracking.lastPlacement = now
        guard !presenceTracking.remote.isEmpty else { return }
        placePresence(of: presenceTracking.remote.keys.sorted())
        announcePresence()
    }

    /// Places the selections of `devices` in the current text: in the version the model shows, by replaying its
    /// history with the selections as marks (at once when a selection was made in that very version), then
    /// through the edits not yet committed.
    private func placePresence(of devices: [DeviceID]) {
        guard !devices.isEmpty else { return }
        guard !state.contains(.inConflict) else {
            for device in devices { presenceTracking.remote[device]?.selection = nil }
            return
        }
        let shown = shownHeads()
        let shownHashes = Set(shown.map(\.hash))
        var shownVector = VersionVector()
        for change in shown { shownVector.merge(change.vector) }
        var marked: [(device: DeviceID, marks: DocumentReplay<Model>.Marks)] = []
        var placed: [DeviceID: [Int]] = [:]
        for device in devices {
            guard let remote = presenceTracking.remote[device] else { continue }
            let positions = Self.markPositions(remote.state)
            if Set(remote.state.heads) == shownHashes {
                placed[device] = positions
                continue
            }
            // The version must have arrived, be in what the model shows, and be recent: placing a selection replays
            // the history since its version, which a device's own selections keep short (they follow its commits),
            // and a state naming an old version must not make every refresh replay a long history.
            var heads: [Change] = []
            for hash in remote.state.heads {
                guard let change = try? library.store.change(hash, of: id), change.vector.isContained(in: shownVector),
                    shownVector.changeCount - change.vector.changeCount <= PresenceTracking.placementDistance
                else { break }
                heads.append(change)
            }
            guard heads.count == remote.state.heads.count, !heads.isEmpty else { continue }
            marked.append((device, .init(heads: heads, positions: positions)))
        }
        if !marked.isEmpty {
            var replay = DocumentReplay<Model>(store: library.store, document: id, decoded: tracking.decodedOperations)
            replay.known = tracking.knownStates
            if let found = try? replay.markedPositions(marked.map(\.marks), in: shown) {
                for (entry, positions) in zip(marked, found) { placed[entry.device] = positions }
            }
        }
        let pending = editing.group.hasUncommittedEdits ? Self.textEdits(of: editing.group.operations) : []
        let count = (model as? any CharacterMergeable)?.mergeableTextCount ?? 0
        for device in devices {
            guard let remote = presenceTracking.remote[device] else { continue }
            guard var positions = placed[device] else {
                presenceTracking.remote[device]?.selection = nil
                continue
            }
            for index in positions.indices {
                positions[index] = min(Self.position(positions[index], after: pending), count)
            }
            presenceTracking.remote[device]?.selection = Self.selection(positions, of: remote.state)
        }
    }

    /// The places a state marks: its anchor and head, ascending, once when they are one.
    private static func markPositions(_ state: PresenceState) -> [Int] {
        state.anchor == state.head ? [state.anchor] : [min(state.anchor, state.head), max(state.anchor, state.head)]
    }

    /// The selection whose places (as ``markPositions(_:)`` lists them) were found at `positions`.
    private static func selection(_ positions: [Int], of state: PresenceState) -> TextSelection? {
        switch positions.count {
        case 1: return TextSelection(cursor: positions[0])
        case 2 where state.anchor <= state.head: return TextSelection(anchor: positions[0], head: positions[1])
        case 2: return TextSelection(anchor: positions[1], head: positions[0])
        default: return nil
        }
    }

    /// Moves the other devices' selections, and this device's waiting one, by an edit made here (`operation`, just
    /// applied, whose inverse is `inverse`).
    func movePresence(by operation: Model.Operation, inverse: Model.Operation) {
        guard !presenceTracking.remote.isEmpty || presenceTracking.waiting != nil else { return }
        var edits = Self.textEdits(of: [operation])
        guard !edits.isEmpty else { return }
        // A replacement of the whole text (an app that binds the whole text sends one per keystroke) moves what
        // follows the part that differs, as the character merge reads it: the text it replaced is its inverse's.
        if edits.count == 1, case .replaceAll(let new) = edits[0],
            case .replaceAll(let old)? = Self.textEdits(of: [inverse]).first
        {
            edits = TextEdit.splice(from: old, to: new)
        }
        func moved(_ selection: TextSelection) -> TextSelection {
            TextSelection(
                anchor: Self.position(selection.anchor, after: edits), head: Self.position(selection.head, after: edits)
            )
        }
        presenceTracking.waiting = presenceTracking.waiting.map(moved)
        guard !presenceTracking.remote.isEmpty else { return }
        for device in presenceTracking.remote.keys {
            guard let selection = presenceTracking.remote[device]?.selection else { continue }
            presenceTracking.remote[device]?.selection = moved(selection)
        }
        announcePresence()
    }

    /// The text edits `operations` make; none for a model that does not merge character by character.
    static func textEdits(of operations: [Model.Operation]) -> [TextEdit] {
        guard let type = Model.self as? any CharacterMergeable.Type else { return [] }
        return textEdits(type, operations)
    }

    private static func textEdits<M: CharacterMergeable>(_ type: M.Type, _ operations: [Model.Operation]) -> [TextEdit]
    {
        var edits: [TextEdit] = []
        for operation in operations {
            guard let operation = operation as? M.Operation else { continue }
            _ = M.appendTextEdits(of: operation, to: &edits)
        }
        return edits
    }

    /// Where `position` goes when `edits` apply in order: after the scalar it follows (typing at the position itself
    /// leaves it before what was typed), at the start of a deletion that took that scalar.
    static func position(_ position: Int, after edits: [TextEdit]) -> Int {
        var position = position
        for edit in edits {
            switch edit {
            case .insert(let at, let scalars):
                if at < position { position += scalars.count }
            case .append:
                break
            case .delete(let at, let count):
                if at < position { position -= min(count, position - at) }
            case .replaceAll(let scalars):
                position = min(position, scalars.count)
            }
        }
        return position
    }
}
