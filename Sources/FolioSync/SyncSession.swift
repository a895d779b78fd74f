import FolioCore

/// The sync protocol between two peers as a state machine with no I/O: messages and results go in, actions
/// (``SyncAction``) come out.
///
/// The initiator opens with a hello summarising what it has (a version vector per document); the responder
/// answers with its own. Each side then pulls, per document whose vectors differ, exactly the changes it lacks
/// (`request(since: its vector)`), so the cost grows with what is missing, not with the history. Requests are
/// answered statelessly from the log, and ingesting is idempotent, so a delayed, duplicated or reordered message
/// is harmless. A lost one is recovered by ``tick()``: on a timeout each side repeats what it still waits for
/// (the initiator its hello, either side its requests, asking only for what is still missing, and the initiator its
/// `done`). The initiator says `done` once it holds everything the responder announced; the responder answers with
/// its own `done` once it holds everything the initiator announced. The initiator is finished when it has that
/// answer: both sides then hold what the other had at the start. (The responder cannot know that its answer
/// arrived; a server keeps answering repeated `done`s for a while before it closes.)
///
/// Session numbers guard against late messages of an earlier session: a hello must answer this session and a
/// `done` must be addressed to it.
///
/// Documents this side keeps to itself (``unpublished``) take no part: they are not in its hello, a request for one
/// is answered with nothing, the peer's changes of one are neither requested nor ingested (pushed unsolicited, they
/// are dropped), and the session is complete without them.
///
/// A driver (``SyncDriver``) performs the actions against a store and a transport; tests drive the session
/// directly, which is how every delivery order of an exchange can be replayed in a plain loop.
public struct SyncSession: Hashable, Sendable {
    /// Which side of the exchange the session plays.
    public enum Role: Hashable, Sendable {
        /// Opens the exchange, retries its hello, and decides when the exchange is over.
        case initiator
        /// Answers the initiator's hello.
        case responder
    }

    /// How large a `changes` message may grow before the rest goes in another.
    public struct Limits: Hashable, Sendable {
        /// At most this many changes per message.
        public var changesPerMessage: Int
        /// At most about this many bytes of changes per message (a single larger change travels alone).
        public var bytesPerMessage: Int
        /// At most this many documents are asked for at once; the next is asked for once one of them is complete, so
        /// that a hello announcing many documents costs the asker a window of requests, not one per document
        /// (`nil`: all at once, as between a device's own peers).
        public var requestWindow: Int?

        /// Creates limits.
        ///
        /// - Precondition: all are positive.
        public init(changesPerMessage: Int = 512, bytesPerMessage: Int = 4 << 20, requestWindow: Int? = nil) {
            precondition(
                changesPerMessage > 0 && bytesPerMessage > 0 && (requestWindow ?? 1) > 0,
                "message limits must be positive")
            self.changesPerMessage = changesPerMessage
            self.bytesPerMessage = bytesPerMessage
            self.requestWindow = requestWindow
        }
    }

    /// The other side, as its hello described it.
    public struct Peer: Hashable, Sendable {
        /// The peer's device.
        public var device: Device
        /// The peer's session number.
        public var session: UInt64
        /// What the peer announced it has: what this side must hold before it is complete.
        public var vectors: [DocumentID: VersionVector]
    }

    /// This side's role.
    public let role: Role
    /// This side's device.
    public let device: Device
    /// This session's number; fresh for every session.
    public let id: UInt64
    /// The message size limits.
    public let limits: Limits
    /// This side's version vector of every document it publishes, as last reported (at creation, then by
    /// ``ingested(_:vector:keptWaiting:)``).
    public private(set) var vectors: [DocumentID: VersionVector]
    /// This side's heads of every document it publishes, at creation, announced in its hello.
    public private(set) var heads: [DocumentID: [ChangeHash]]
    /// The documents this side keeps to itself: left out of the exchange both ways.
    public private(set) var unpublished: Set<DocumentID>
    /// Devices this side knows by name, announced in its hello.
    public let devices: [Device]
    /// The peer, once its hello has arrived.
    public private(set) var peer: Peer?
    /// Whether the peer said it holds everything this side announced.
    public private(set) var peerIsDone = false
    private var saidDone = false
    /// Documents that gained something since the last tick: their vector grew, or the store kept changes of theirs
    /// that wait for a head or a parent the next message brings. Their replies are still arriving, so a timeout does
    /// not ask for them again (which would resend everything still in flight). Changes the store already held or
    /// refused are no progress: a peer that sends nothing new does not keep a document from being asked for again.
    private var progressed: Set<DocumentID> = []
    /// With a request window: the documents asked for and not yet complete, and those still to ask for, in identity
    /// order (the next one asked for is the first).
    private var requested: Set<DocumentID> = []
    private var toRequest: [DocumentID] = []
    private var nextToRequest = 0

    /// Creates a session.
    ///
    /// - Parameters:
    ///   - device: this side's device.
    ///   - id: a session number not used before between these peers (from the driver's randomness).
    ///   - role: initiator or responder.
    ///   - vectors: this side's version vector of every document it has.
    ///   - heads: this side's heads of every document, so that the peer can check that equal vectors mean equal
    ///     logs.
    ///   - devices: devices this side knows by name, passed on to the peer.
    ///   - limits: how large a `changes` message may grow.
    ///   - unpublished: documents this side keeps to itself (`UnpublishedDocuments.documents()`): left out of
    ///     `vectors` and `heads`, never sent, requested nor ingested.
    public init(
        device: Device, id: UInt64, role: Role, vectors: [DocumentID: VersionVector],
        heads: [DocumentID: [ChangeHash]] = [:], devices: [Device] = [], limits: Limits = Limits(),
        unpublished: Set<DocumentID> = []
    ) {
        self.device = device
        self.id = id
        self.role = role
        self.vectors = vectors.filter { !unpublished.contains($0.key) }
        self.heads = heads.filter { !unpublished.contains($0.key) }
        self.unpublished = unpublished
        self.devices = devices.sorted { $0.id < $1.id }
        self.limits = limits
    }

    /// Leaves `documents` out of the exchange from now on, as if they were unpublished from the start: what a
    /// client does with the documents a server's scope leaves out (`SyncScope`), which it learns before the
    /// server's hello. Their changes are no longer sent, requested nor ingested.
    public mutating func keepToItself(_ documents: Set<DocumentID>) {
        unpublished.formUnion(documents)
        for document in documents {
            vectors[document] = nil
            heads[document] = nil
        }
    }

    /// Whether this side holds everything the peer announced in its hello, but for the documents it keeps to
    /// itself.
    ///
    /// - Complexity: O(documents × devices).
    public var isComplete: Bool {
        guard let peer else { return false }
        // With a window, a document asked for is one still missing, and none waits to be asked for while none is.
        if limits.requestWindow != nil, !requested.isEmpty { return false }
        return peer.vectors.allSatisfy { document, vector in
            unpublished.contains(document) || vector.isContained(in: vectors[document] ?? VersionVector())
        }
    }

    /// Whether the exchange is over for this side: it is complete and the peer said it is complete too.
    ///
    /// The initiator's view decides when an exchange is over. A finished responder has answered the initiator's
    /// `done` but cannot know that the answer arrived; it should go on answering for a while before it leaves.
    public var isFinished: Bool { isComplete && peerIsDone }

    /// The documents of which this side still lacks changes the peer announced, in identity order; never one it
    /// keeps to itself.
    ///
    /// - Complexity: O(documents × (log documents + devices)).
    public var missingDocuments: [DocumentID] {
        guard let peer else { return [] }
        return peer.vectors.keys.sorted().filter { document in
            !unpublished.contains(document)
                && !peer.vectors[document]!.isContained(in: vectors[document] ?? VersionVector())
        }
    }

    private var hello: SyncHello {
        SyncHello(
            device: device, session: id, replyTo: role == .responder ? peer?.session : nil, vectors: vectors,
            heads: heads, devices: devices)
    }

    /// Opens the exchange: the initiator says hello; the responder waits for one.
    public mutating func start() -> [SyncAction] {
        role == .initiator ? [.send(.hello(hello))] : []
    }

    /// Handles a message from the peer.
    ///
    /// - Complexity: O(documents × devices) for a hello, O(1) for the others (plus the size of the message).
    public mutating func receive(_ message: SyncMessage) -> [SyncAction] {
        switch message {
        case .hello(let incoming):
            return receiveHello(incoming)
        case .request(let document, let since):
            // Answered from the log whoever asks: a request is self-contained, and answering twice is harmless. A
            // document kept on this side is not answered for, not even with an empty reply.
            guard !unpublished.contains(document) else { return [] }
            return [.fetch(document: document, since: since)]
        case .changes(let document, let changes, let heads):
            // A peer that still shares a document this side keeps to itself may push its changes: they stay out.
            guard !unpublished.contains(document), !changes.isEmpty else { return [] }
            return [.ingest(document: document, changes: changes, heads: heads)]
        case .run:
            // A run is decoded against a log (a driver turns it into the `changes` it holds); undecoded, it says
            // nothing the session can act on.
            return []
        case .wantBlobs, .blobs:
            // Blobs are the driver's: they change nothing of what the session tracks (the logs' vectors).
            return []
        case .done(let from, let to):
            guard to == id, peer == nil || peer!.session == from else { return [] }  // another session's
            peerIsDone = true
            guard role == .responder else { return [] }
            // The initiator repeats its `done` until it hears ours: answer every time when complete (an earlier
            // answer may have been lost), otherwise repeat the requests still unanswered (so the initiator's timer
            // drives this side's retries too) and answer once complete.
            guard isComplete else {
                // With a window, the replies to the requests in it may still be on their way: they are asked again
                // only when nothing arrived since the last `done` (an initiator repeats it every timeout).
                guard limits.requestWindow != nil else { return requests() }
                defer { progressed = [] }
                return progressed.isEmpty ? requests() : []
            }
            saidDone = true
            return [.send(.done(from: id, to: from))]
        }
    }

    private mutating func receiveHello(_ incoming: SyncHello) -> [SyncAction] {
        switch role {
        case .initiator:
            guard incoming.replyTo == id else { return [] }  // not an answer to this session
            if let peer {
                guard peer.session == incoming.session else { return [] }
                absorb(incoming.vectors)
                return fillWindow()
            }
            peer = Peer(device: incoming.device, session: incoming.session, vectors: incoming.vectors)
            return verifications(incoming) + openRequests() + doneIfComplete()
        case .responder:
            guard incoming.replyTo == nil else { return [] }  // responders do not talk to responders
            if let peer {
                // The initiator repeats its hello until it hears ours: answer again, nothing more.
                guard peer.session == incoming.session else { return [] }
                absorb(incoming.vectors)
                return [.send(.hello(hello))] + fillWindow()
            }
            peer = Peer(device: incoming.device, session: incoming.session, vectors: incoming.vectors)
            return verifications(incoming) + [.send(.hello(hello))] + openRequests()
        }
    }

    /// Where this side already has everything the peer has, the peer's heads must be in this side's log. A head
    /// that is also one of this side's heads is known to be there, so only the others are looked up.
    private func verifications(_ incoming: SyncHello) -> [SyncAction] {
        incoming.heads.keys.sorted().compactMap { document in
            guard !unpublished.contains(document) else { return nil }
            let theirs = incoming.vectors[document] ?? VersionVector()
            guard theirs.isContained(in: vectors[document] ?? VersionVector()) else { return nil }
            let ours = heads[document] ?? []
            let unknown = incoming.heads[document]!.filter { !ours.contains($0) }
            guard !unknown.isEmpty else { return nil }
            return .verify(document: document, heads: unknown)
        }
    }

    /// A repeated hello may announce more than the first: its peer's log only grows.
    private mutating func absorb(_ announced: [DocumentID: VersionVector]) {
        for document in announced.keys.sorted() {
            let known = peer!.vectors[document]
            peer!.vectors[document] = (known ?? VersionVector()).merging(announced[document]!)
            // With a window, a document newly missing joins the documents still to ask for.
            if limits.requestWindow != nil, known == nil || !announced[document]!.isContained(in: known!),
                !requested.contains(document)
            {
                toRequest.append(document)
            }
        }
    }

    /// Turns the result of a ``SyncAction/fetch(document:since:)`` into `changes` messages within the limits, each
    /// with a head of every device whose changes it carries: signed by `sign` for the device's last change in the
    /// message when `sign` can (this side's own identities), otherwise the one of `heads` that reaches its changes in
    /// the message soonest (`SignedHead.reaching(_:_:among:)`), so that each message is vouched for by itself or
    /// by the next. Without `sign`, this side's own changes carry only the heads in `heads`.
    ///
    /// - Parameters:
    ///   - changes: in causal order, as the store returns them.
    ///   - heads: the document's signed heads above the asker's vector, as the store returns them.
    ///   - sign: signs a head for a change of this side's own identities; `nil` for others' changes.
    ///   - document: the document the changes belong to.
    /// - Complexity: O(changes + heads × devices per message).
    public mutating func fetched(
        _ changes: [EncodedChange], heads: [SignedHead], signing sign: (Change) -> SignedHead? = { _ in nil },
        of document: DocumentID
    ) -> [SyncAction] {
        var partHeads = PartHeads(kept: heads.filter { $0.document == document }, reply: changes.lazy.map(\.change))
        var actions: [SyncAction] = []
        var batch: [EncodedChange] = []
        var bytes = 0
        func flush() {
            let batchHeads = partHeads.next(batch.lazy.map(\.change), sign: sign)
            actions.append(.send(.changes(document: document, changes: batch, heads: batchHeads)))
            batch = []
            bytes = 0
        }
        for change in changes {
            if !batch.isEmpty,
                batch.count == limits.changesPerMessage || bytes + change.bytes.count > limits.bytesPerMessage
            {
                flush()
            }
            batch.append(change)
            bytes += change.bytes.count
        }
        if !batch.isEmpty { flush() }
        return actions
    }

    /// Records `document`'s vector after an ``SyncAction/ingest(document:changes:heads:)``; says `done` when that
    /// made this side complete.
    ///
    /// - Parameters:
    ///   - document: the document ingested.
    ///   - vector: its vector now.
    ///   - keptWaiting: whether the store kept new changes of it that wait (for a head or a parent): progress that
    ///     the vector does not show yet, so a timeout does not ask for the document again while the rest arrives.
    /// - Complexity: O(documents × devices).
    public mutating func ingested(_ document: DocumentID, vector: VersionVector, keptWaiting: Bool = false)
        -> [SyncAction]
    {
        let before = vectors[document] ?? VersionVector()
        if keptWaiting || !vector.isContained(in: before) { progressed.insert(document) }
        vectors[document] = before.merging(vector)
        var actions: [SyncAction] = []
        if requested.contains(document), !isMissing(document) {
            requested.remove(document)
            actions = fillWindow()
        }
        return actions + doneIfComplete()
    }

    /// A timeout passed: repeats what this side still waits for (the initiator's hello, this side's requests, the
    /// initiator's `done`). Requests ask only for what is still missing, and only for documents that received
    /// nothing since the previous timeout.
    ///
    /// - Complexity: O(documents × devices).
    public mutating func tick() -> [SyncAction] {
        guard peer != nil else { return role == .initiator ? [.send(.hello(hello))] : [] }
        let stalled = requests().filter { action in
            guard case .send(.request(let document, _)) = action else { return true }
            return !progressed.contains(document)
        }
        progressed = []
        var actions = stalled
        if role == .initiator, isComplete, !peerIsDone { actions.append(.send(.done(from: id, to: peer!.session))) }
        return actions
    }

    /// The requests still unanswered, to repeat: for every missing document, or with a window, for those in it.
    private func requests() -> [SyncAction] {
        guard limits.requestWindow != nil else { return missingDocuments.map(request) }
        return requested.sorted().filter(isMissing).map(request)
    }

    /// The first requests after the peer's hello: every missing document, or with a window, as many as it holds.
    private mutating func openRequests() -> [SyncAction] {
        guard limits.requestWindow != nil else { return requests() }
        toRequest = missingDocuments
        nextToRequest = 0
        return fillWindow()
    }

    /// Asks for the next documents still missing until the window is full.
    private mutating func fillWindow() -> [SyncAction] {
        guard let window = limits.requestWindow else { return [] }
        var actions: [SyncAction] = []
        while requested.count < window, nextToRequest < toRequest.count {
            let document = toRequest[nextToRequest]
            nextToRequest += 1
            guard isMissing(document), requested.insert(document).inserted else { continue }
            actions.append(request(document))
        }
        if nextToRequest == toRequest.count {
            toRequest = []
            nextToRequest = 0
        }
        return actions
    }

    private func request(_ document: DocumentID) -> SyncAction {
        .send(.request(document: document, since: vectors[document] ?? VersionVector()))
    }

    /// Whether the peer announced changes of `document` that this side lacks (never for one it keeps to itself).
    private func isMissing(_ document: DocumentID) -> Bool {
        guard let announced = peer?.vectors[document], !unpublished.contains(document) else { return false }
        return !announced.isContained(in: vectors[document] ?? VersionVector())
    }

    /// The initiator says `done` as soon as it is complete; the responder only once asked (when the initiator's
    /// `done` arrived before it was complete), so an exchange with nothing to do takes four messages.
    private mutating func doneIfComplete() -> [SyncAction] {
        guard !saidDone, isComplete, role == .initiator || peerIsDone else { return [] }
        saidDone = true
        return [.send(.done(from: id, to: peer!.session))]
    }
}
