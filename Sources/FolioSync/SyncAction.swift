import FolioCore

/// What a ``SyncSession`` asks its driver to do. The session does no I/O: it only returns actions.
public enum SyncAction: Hashable, Sendable {
    /// Send this message to the peer.
    case send(SyncMessage)
    /// Read the changes of `document` that a peer at `since` lacks (`ChangeLogStore.changes(of:since:)`) and hand
    /// them, with the document's signed heads (`ChangeLogStore.signedHeads(of:)`), to
    /// ``SyncSession/fetched(_:heads:signing:of:)``.
    case fetch(document: DocumentID, since: VersionVector)
    /// Ingest changes from the peer with the heads that vouch for them (`ChangeLogStore.ingest(encoded:heads:)`),
    /// then report the document's new vector to ``SyncSession/ingested(_:vector:keptWaiting:)``.
    case ingest(document: DocumentID, changes: [EncodedChange], heads: [SignedHead])
    /// Check that these changes of `document` (the peer's heads, where the peer's vector is covered by this side's)
    /// are in the log. One that is not means the two logs hold different changes under the same identities, a
    /// device identity reused by a cloned or restored device: an integrity error, to report, never to paper over.
    case verify(document: DocumentID, heads: [ChangeHash])
}
