import FolioStore

extension DocumentLibrary {
    /// This device's own bookkeeping per document (where its file was written, its undo history), kept in the
    /// store's file and never synced.
    var localState: LocalStateStore { store.localState }
}
