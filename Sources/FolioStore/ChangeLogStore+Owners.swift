/// The store's file holds more than the log: each of these owns one part of it, with the store's transactions. An
/// owner is a small value made on each use; it holds the store, nothing else.
extension ChangeLogStore {
    /// The checkpoints of the documents, and the content-addressed blobs that hold their contents.
    public var checkpoints: CheckpointStore { CheckpointStore(store: self) }

    /// Where the next sync with each peer starts, per document.
    public var syncCursors: SyncCursors { SyncCursors(store: self) }

    /// The devices known to the store, with their display names.
    public var devices: DeviceRegistry { DeviceRegistry(store: self) }

    /// This device's own values per document, by key: bookkeeping that is never synced.
    public var localState: LocalStateStore { LocalStateStore(store: self) }

    /// The documents this device keeps to itself.
    public var unpublished: UnpublishedDocuments { UnpublishedDocuments(store: self) }

    /// The changes from peers that wait for a signed head of their device.
    public var unvouched: UnvouchedChanges { UnvouchedChanges(store: self) }
}
