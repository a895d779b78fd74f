import FolioCore
import FolioMerge
import FolioStore
import Foundation

/// A document's history: the versions this device recorded and those people named, what the document was at any of
/// them or at any change, and bringing one back (see ``HistoryVersion``).
extension Document {
    /// The document's versions, oldest first: those this device recorded (each save, close, arrival of others'
    /// work and restore, coalesced: see ``HistoryVersion``) and those a person named on any device
    /// (``markVersion(_:)``), each with what changed since the one before it.
    ///
    /// - Throws: ``DocumentError`` `.store`.
    public func history() throws(DocumentError) -> [HistoryVersion] {
        try ensureOpen()
        let recorded = try loadedRecordedVersions()
        let lifecycle: [Change]
        do { lifecycle = try library.store.lifecycleChanges(of: id) } catch {
            throw .store(error, "reading the named versions of \(info.displayName)")
        }
        func version(
            _ id: ChangeHash, _ date: Timestamp, _ occasion: HistoryVersion.Occasion, _ name: String?,
            _ device: DeviceID, _ heads: [ChangeHash], _ vector: VersionVector
        ) -> HistoryVersion {
            HistoryVersion(
                id: id, date: date, occasion: occasion, name: name, device: device, heads: heads, vector: vector,
                summary: HistoryVersion.Summary(changes: 0, devices: []))
        }
        var versions: [HistoryVersion] = []
        var named = Set<ChangeHash>()
        var namedHeads = Set<[ChangeHash]>()
        for change in lifecycle {
            guard case .lifecycle(.markVersion(let name)) = change.kind else { continue }
            named.insert(change.hash)
            namedHeads.insert(change.parents)
            versions.append(
                version(change.hash, change.wallTime, .named, name, change.id.device, change.parents, change.vector))
        }
        // A recorded version of a named one's state (recorded at its change, or at what it names) is listed once.
        for entry in recorded.entries where !named.contains(entry.heads[0]) && !namedHeads.contains(entry.heads) {
            versions.append(
                version(entry.heads[0], entry.date, entry.occasion, nil, library.device.id, entry.heads, entry.vector))
        }
        versions.sort { ($0.date, $0.vector.changeCount, $0.id) < ($1.date, $1.vector.changeCount, $1.id) }
        var previous = VersionVector()
        for index in versions.indices {
            var changes = 0
            var devices: [DeviceID] = []
            for entry in versions[index].vector.entries where entry.seq > previous[entry.device] {
                changes += Int(entry.seq - previous[entry.device])
                devices.append(entry.device)
            }
            previous = versions[index].vector
            versions[index].summary = HistoryVersion.Summary(changes: changes, devices: devices.sorted())
        }
        return versions
    }

    /// The newest version of ``history()`` made at or before `date`, if any.
    ///
    /// - Throws: ``DocumentError`` `.store`.
    public func version(at date: Timestamp) throws(DocumentError) -> HistoryVersion? {
        try history().last { $0.date <= date }
    }

    /// The document as it was at `version`: the state at its head, or the character merge of its heads when it
    /// showed several merged (a text's).
    ///
    /// - Throws: ``DocumentError`` `.notFound` when the log lacks a change of the version (not from this document),
    ///   `.store`, `.invalidContents`.
    public func contents(at version: HistoryVersion) throws(DocumentError) -> Model {
        try ensureOpen()
        if version.occasion == .named {
            let mark = try loggedChange(version.id)
            guard mark.parents.count > 1, Model.self is any CharacterMergeable.Type else {
                return try replayed().state(at: mark).model
            }
        }
        return try state(ofHeads: version.heads, within: version.vector)
    }

    /// The document as it was at the change with hash `change`: its state there, every change in its past replayed.
    ///
    /// - Throws: ``DocumentError`` `.notFound` when the document's log has no such change, `.store`,
    ///   `.invalidContents`.
    public func contents(at change: ChangeHash) throws(DocumentError) -> Model {
        try ensureOpen()
        return try replayed().state(at: try loggedChange(change)).model
    }

    /// Names the version the document shows now (``HistoryVersion/Occasion/named``), as a change of the log that
    /// syncs: every device lists it. The open group is committed first. The name is made on this device's line of
    /// the document, as a rename is: while the document shows other devices' concurrent typing merged in
    /// (a text's silent merge), the named version is the document without what has not yet been edited on top of.
    ///
    /// - Parameter name: what to call it, such as `Sent to editor`: not empty, at most 200 characters.
    /// - Returns: the named version.
    /// - Throws: ``DocumentError`` `.invalidOperation` for an empty or overlong name, `.deleted`, `.readOnly`,
    ///   `.store`.
    @discardableResult
    public func markVersion(_ name: String) throws(DocumentError) -> HistoryVersion {
        try ensureEditable()
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= Self.versionNameLimit else {
            throw DocumentError(
                .invalidOperation,
                "a version's name must have 1 to \(Self.versionNameLimit) characters, not \(trimmed.count)")
        }
        try commit()
        // Made on the heads a catalog change of this device is made on (as a rename is): a lifecycle change carries
        // the contents of its primary parent alone, so one made on several competing or merged heads would leave
        // the document showing one of them.
        let parents = try library.lifecycleParents(of: id)
        let mark: Change
        do {
            mark = try library.store.append([.lifecycle(.markVersion(name: trimmed))], to: id, on: .heads(parents))[0]
        } catch {
            throw .store(error, "naming a version of \(info.displayName)")
        }
        noteAppended(mark)
        try refresh()
        guard let version = try history().last(where: { $0.id == mark.hash }) else {
            throw DocumentError(.store, "the named version \(trimmed.debugDescription) is not in the history")
        }
        return version
    }

    /// The longest name ``markVersion(_:)`` accepts, in characters.
    public static var versionNameLimit: Int { 200 }

    /// Makes the document equal to `version` again, as a new change on top of the current one: nothing is lost
    /// (the versions in between stay in the history), the change syncs like any edit and merges with concurrent
    /// ones, and ``undo()`` takes it back, when the model expresses the difference as operations
    /// (`DocumentModel.operations(becoming:)`; the built-in models do). A model that does not is restored
    /// by a baseline of the older contents, which cannot be undone. The open group is committed first; the version
    /// right after the restore is recorded (``HistoryVersion/Occasion/restored``).
    ///
    /// - Throws: ``DocumentError`` `.notFound` when the log lacks the version's changes, `.deleted`, `.readOnly`,
    ///   `.store`, `.invalidContents`.
    public func restore(_ version: HistoryVersion) throws(DocumentError) {
        // Caught up with this device's other processes first: the operations are computed from the model they apply to.
        try prepareToEdit(onlyOwnChanges: true)
        let target = try contents(at: version)
        if let operations = model.operations(becoming: target) {
            guard !operations.isEmpty else { return }
            try edit(operations)
            try commit()
        } else {
            _ = try adopt(target.contents(), madeOn: head)
        }
        try? recordVersion(.restored)  // the history indexes the log: the restore stands without it
    }

    // MARK: Recording

    /// Records the version the document shows now in this device's history (coalesced; see ``RecordedVersions``),
    /// writing it to the store unless it only replaced the latest version received.
    func recordVersion(_ occasion: HistoryVersion.Occasion) throws(DocumentError) {
        var versions = try loadedRecordedVersions()
        let shown = shownHeads()
        // A named version's change shows the version it names: that version is what is recorded.
        var heads = shown.map(\.hash)
        if case .lifecycle(.markVersion) = head.kind, !head.parents.isEmpty { heads = head.parents + heads.dropFirst() }
        var vector = VersionVector()
        for change in shown { vector.merge(change.vector) }
        let recorded = versions.record(occasion, at: library.clock.now(), heads: heads, vector: vector)
        guard recorded != .unchanged else { return }
        recordedVersions = versions
        // A version received within the latest one's window only replaces it: kept in memory until the next write
        // (live typing would otherwise write the history at every keystroke that arrives).
        guard occasion != .received || recorded != .replacedLatest else { return }
        do {
            try library.store.localState.set([RecordedVersions.stateKey: versions.encoded()], of: id)
        } catch {
            throw .store(error, "recording a version of \(info.displayName)")
        }
    }

    /// The versions this device recorded, read from the store the first time.
    private func loadedRecordedVersions() throws(DocumentError) -> RecordedVersions {
        if let recordedVersions { return recordedVersions }
        let stored: Data?
        do { stored = try library.store.localState.value(RecordedVersions.stateKey, of: id) } catch {
            throw .store(error, "reading the history of \(info.displayName)")
        }
        let versions = RecordedVersions(decoding: stored)
        recordedVersions = versions
        return versions
    }

    private func replayed() -> DocumentReplay<Model> {
        DocumentReplay<Model>(store: library.store, document: id, decoded: tracking.decodedOperations)
    }

    /// The change with hash `hash` in this document's log. A head of `vector` is its device's latest change there (a
    /// device makes each change on its own latest), so it is looked up by identity first: a lookup by hash of an
    /// old change reads every segment of the log, one by identity only those up to it.
    private func loggedChange(_ hash: ChangeHash, within vector: VersionVector? = nil) throws(DocumentError) -> Change {
        if let vector, let latest = try replayed().latestChange(hash, of: vector) { return latest }
        let found: Change?
        do { found = try library.store.change(hash, of: id) } catch { throw .store(error, "reading the log") }
        guard let found else {
            throw DocumentError(.notFound, "change \(hash.shortHex) is not in the log of \(info.displayName)")
        }
        return found
    }

    /// The state at `heads`, the heads of `vector`: at the first, or the character merge of all of them.
    private func state(ofHeads heads: [ChangeHash], within vector: VersionVector) throws(DocumentError) -> Model {
        guard !heads.isEmpty else { throw DocumentError(.notFound, "a version without changes") }
        var changes: [Change] = []
        for hash in heads { changes.append(try loggedChange(hash, within: vector)) }
        guard changes.count > 1, Model.self is any CharacterMergeable.Type else {
            return try replayed().state(at: changes[0]).model
        }
        return try replayed().graphState(from: changes).model
    }
}
