import FolioCore
import FolioStore
import FolioSync
import Logging

/// A device's hello: what the library admits (bounds on devices and documents, names only of proven devices), and the
/// sessions a connection keeps.
extension ServedLibrary {
    func receiveHello(_ hello: SyncHello, size: Int, channel: UInt64, on connection: Connection) {
        guard hello.replyTo == nil else {
            return refuse(connection, code: 1002, "a client's hello must not answer a session")
        }
        guard hello.vectors.count <= limits.documentsPerLibrary else {
            return refuse(
                connection, code: 1008,
                "the hello announces \(hello.vectors.count) documents; a library holds at most \(limits.documentsPerLibrary)"
            )
        }
        if let device = connection.device {
            guard device.id == hello.device.id else {
                return refuse(connection, code: 1008, "one connection speaks for one device (\(device.id))")
            }
            if let proof = hello.proof {
                return receiveProof(proof, of: hello, channel: channel, on: connection)
            }
            if device != hello.device {
                connection.device = hello.device
                if connection.proven { recordName(of: hello.device, provenOn: connection) }
            }
        } else {
            // Nothing is bound at a hello (anyone may name any device there); a device bound to another library
            // cannot speak here.
            guard admissible([hello.device.id], on: connection) else { return }
            // A proof answers the server's hello of a session: one before the device's first hello proves nothing.
            guard hello.proof == nil else {
                return refuse(connection, code: 1008, "a device's proof answers the server's hello, not its own first")
            }
            connection.device = hello.device
            logger.info(
                "device connected",
                metadata: [
                    "library": .string(name), "device": .string(hello.device.id.description),
                    "connection": .stringConvertible(connection.id), "peer": .string(connection.peer),
                ])
        }
        // A finished session has nothing more to say to a late repeat of its hello.
        guard connection.finishedPeers[channel] == nil else { return }
        if var session = connection.sessions[channel] {
            let actions = session.receive(.hello(Self.admitted(hello, by: connection.scope, within: session.vectors)))
            connection.sessions[channel] = session
            return perform(actions, on: channel, of: connection)
        }
        guard !budget.isSpent else {
            return refuse(connection, code: 1013, "the server is overloaded: its memory budget is spent")
        }
        var summary: ServerLogSummary
        do { summary = try currentSummary() } catch {
            return fail(connection, "reading the library's summary for a hello", error)
        }
        if connection.isScoped {
            // The documents of the scope, and the names of the devices that wrote them, alone.
            let scope = connection.scope
            summary.vectors = summary.vectors.filter { scope.includes($0.key) }
            summary.heads = summary.heads.filter { scope.includes($0.key) }
            let authors = summary.vectors.values.reduce(into: Set<DeviceID>()) { $0.formUnion($1.devices) }
            summary.devices = summary.devices.filter { authors.contains($0.id) }
        }
        var session = SyncSession(
            device: log.device, id: Self.sessionNumber(), role: .responder, vectors: summary.vectors,
            heads: summary.heads,
            devices: summary.devices, limits: SyncSession.Limits(requestWindow: limits.requestWindow))
        keep(channel, bytes: size, on: connection)
        metrics.sessions.increment()
        let actions = session.receive(.hello(Self.admitted(hello, by: connection.scope, within: summary.vectors)))
        connection.sessions[channel] = session
        perform(actions, on: channel, of: connection)
        // A reader is asked for nothing.
        guard connection.writes else { return }
        // Blobs the log lacks (their device's asking was cut short, or it left first) are asked of each device
        // that opens a session: it answers with those it has.
        var missing: [BlobReference]
        do {
            missing = try log.missingBlobs(limit: SyncMessage.Limits.wantedBlobs)
            // A connection of single documents hears only of the blobs of the documents it writes.
            if connection.isScoped, !missing.isEmpty {
                let writable = try log.blobs(missing, referencedBy: connection.scope.writableDocuments)
                missing = missing.filter(writable.contains)
            }
        } catch {
            return fail(connection, "listing the blobs the log lacks", error)
        }
        if !missing.isEmpty {
            asked(missing, on: channel, of: connection)
            perform([.send(.wantBlobs(missing))], on: channel, of: connection)
        }
    }

    /// A hello as the library's session takes it from a connection of `scope`: as it is when the connection writes
    /// the whole library; else without the documents outside the scope, and, for each document it may only read,
    /// as a reader's (``reader(_:within:)``).
    static func admitted(_ hello: SyncHello, by scope: SyncScope, within held: [DocumentID: VersionVector]) -> SyncHello
    {
        switch scope {
        case .library(writes: true): return hello
        case .library(writes: false): return reader(hello, within: held)
        case .documents:
            // The documents it may only read, as a reader's; those it writes, as they are.
            let readOnly = { (document: DocumentID) in scope.includes(document) && !scope.writes(document) }
            let read = reader(
                SyncHello(
                    device: hello.device, session: hello.session, replyTo: hello.replyTo,
                    vectors: hello.vectors.filter { readOnly($0.key) }, heads: hello.heads.filter { readOnly($0.key) },
                    devices: hello.devices), within: held)
            return SyncHello(
                device: hello.device, session: hello.session, replyTo: hello.replyTo,
                vectors: hello.vectors.filter { scope.writes($0.key) }.merging(read.vectors) { first, _ in first },
                heads: hello.heads.filter { scope.writes($0.key) }.merging(read.heads) { first, _ in first },
                devices: hello.devices)
        }
    }

    /// A reader's hello as the library's session takes it: each document's vector cut down to what the library holds
    /// (documents it lacks left out), and the heads of a document the reader is ahead in left out, so that the
    /// session sends the reader what it lacks and asks it for nothing (it could not send it: 4405).
    static func reader(_ hello: SyncHello, within held: [DocumentID: VersionVector]) -> SyncHello {
        var vectors: [DocumentID: VersionVector] = [:]
        var heads: [DocumentID: [ChangeHash]] = [:]
        for (document, vector) in hello.vectors {
            guard let library = held[document] else { continue }
            vectors[document] = vector.intersecting(library)
            if vector.isContained(in: library), let announced = hello.heads[document] { heads[document] = announced }
        }
        return SyncHello(
            device: hello.device, session: hello.session, replyTo: hello.replyTo, vectors: vectors, heads: heads,
            devices: hello.devices)
    }

    /// Opens `channel`'s session on `connection`, forgetting the oldest sessions past the connection's bounds (the
    /// newest is always kept).
    func keep(_ channel: UInt64, bytes: Int, on connection: Connection) {
        connection.opened.append(channel)
        connection.started[channel] = .now
        // A hello decoded takes about four times its encoded size (a dictionary entry and a vector per document).
        let held = bytes * 4
        connection.sessionBytes[channel] = held
        connection.liveChannel = channel
        budget.charge(held)
        while connection.opened.count > 1,
            connection.opened.count > limits.sessionsPerConnection
                || connection.sessionBytes.values.reduce(0, +) > limits.sessionBytesPerConnection
        {
            let oldest = connection.opened.removeFirst()
            connection.sessions[oldest] = nil
            connection.started[oldest] = nil
            connection.finishedPeers[oldest] = nil
            connection.blobAskingsOpen[oldest] = nil
            connection.heldDone[oldest] = nil
            budget.release(connection.sessionBytes.removeValue(forKey: oldest) ?? 0)
        }
    }

    /// What the server's hello announces: every document's vector and heads, and the names of the devices that
    /// wrote in the log (never more than ``ServerLimits/namedDevicesPerLibrary``), read again after a batch.
    func currentSummary() throws -> ServerLogSummary {
        if let summary { return summary }
        var read = try log.summary()
        var authors = Set<DeviceID>()
        for vector in read.vectors.values { authors.formUnion(vector.devices) }
        read.devices = Array(read.devices.filter { authors.contains($0.id) }.prefix(limits.namedDevicesPerLibrary))
        summary = read
        if documents == nil { documents = Set(read.vectors.keys) }
        return read
    }

    /// Whether none of `devices` is bound to another library; refuses the connection when one is.
    func admissible(_ devices: [DeviceID], on connection: Connection) -> Bool {
        let unknown = Array(Set(devices).subtracting(boundDevices)).sorted()
        guard !unknown.isEmpty else { return true }
        do {
            if let first = try accounts.boundElsewhere(unknown, than: name).first {
                refuse(connection, code: 1008, "device \(first) belongs to another library")
                return false
            }
        } catch {
            fail(connection, "looking up the libraries of devices", error)
            return false
        }
        return true
    }

    /// Binds to this library the devices whose changes it stored (their keys signed them); logs those already bound
    /// to another library (they wrote into two at once).
    func bind(_ devices: Set<DeviceID>) {
        let unknown = Array(devices.subtracting(boundDevices)).sorted()
        guard !unknown.isEmpty else { return }
        do {
            let foreign = try accounts.bind(unknown, to: name)
            if !foreign.isEmpty {
                logger.warning(
                    "devices wrote into two libraries at once",
                    metadata: ["library": .string(name), "devices": .string("\(foreign)")])
            }
            boundDevices.formUnion(unknown)
        } catch {
            logger.error(
                "binding devices failed", metadata: ["library": .string(name), "error": .string("\(error)")])
        }
    }

    /// A fresh session number: from the system's generator, so that the number a proof of a device's key is bound
    /// to cannot be foretold from the ones seen before.
    static func sessionNumber() -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }

    /// A hello that proves its device's key (message format 4): checked against the session the server opened on
    /// `channel`, it makes the connection the device's own, so that what the device says of itself (its name, and
    /// its person unless the token names the user) is recorded once it writes through the connection (at once when
    /// it already did). Nothing of it reaches the session. A proof that does not hold closes the connection (1008);
    /// one of another session or a finished one (a late repeat) is ignored.
    func receiveProof(_ proof: DeviceProof, of hello: SyncHello, channel: UInt64, on connection: Connection) {
        // `holds` checks the session too; this one tells a late proof, ignored, from a false one.
        guard let session = connection.sessions[channel], session.peer?.session == hello.session,
            proof.session == session.id
        else { return }
        guard proof.holds(for: hello.device, session: session.id) else {
            return refuse(connection, code: 1008, "the hello's proof of device \(hello.device.id) does not hold")
        }
        let changed = connection.device != hello.device || !connection.provenByKey
        connection.device = hello.device
        connection.provenByKey = true
        if connection.proven, changed { recordName(of: hello.device, provenOn: connection) }
    }

    /// Records the name `device` gave itself on `connection`, where it proved its key, and tells the library's other
    /// connected devices; within ``ServerLimits/namedDevicesPerLibrary``.
    ///
    /// Its person is recorded only when the connection proved the key itself (``Connection/provenByKey``): the
    /// token's user when the token names one, else what the device says. A connection proven only by a change it
    /// brought could be relaying another device's changes, so it keeps the person recorded before. Names and persons
    /// are kept as a device's store keeps them (`DeviceRegistry.storableName(_:)`).
    func recordName(of device: Device, provenOn connection: Connection) {
        do {
            let named = try currentSummary().devices
            let known = named.first { $0.id == device.id }
            var device = Device(
                id: device.id, name: DeviceRegistry.storableName(device.name),
                person: DeviceRegistry.storableName(device.person))
            if !connection.provenByKey {
                // Proven only by a change, which could be another device's, relayed: it names a device the log
                // has no name for, and says nothing of its person (an empty person keeps the recorded one).
                guard known?.name.isEmpty ?? true else { return }
                device.person = ""
            } else if let person = connection.person {
                // The token names the user: the device does not say whom it acts for then.
                device.person = DeviceRegistry.storableName(person)
            }
            guard !device.name.isEmpty || !device.person.isEmpty, device != known else { return }
            if namedDevices == nil { namedDevices = Set(named.map(\.id)) }
            guard namedDevices!.contains(device.id) || namedDevices!.count < limits.namedDevicesPerLibrary else {
                return
            }
            try log.name(device)
            namedDevices!.insert(device.id)
        } catch {
            return logger.error(
                "recording a device's name failed", metadata: ["library": .string(name), "error": .string("\(error)")])
        }
        // A connection of single documents hears only of the devices that wrote one of them.
        let vectors = summary?.vectors ?? [:]
        let wrote = { (other: Connection) -> Bool in
            other.scope.documents.contains { vectors[$0]?[device.id] ?? 0 > 0 }
        }
        summary = nil
        // The others hear of it as a hello of their session that adds nothing but the name.
        for other in connections.keys.sorted().compactMap({ connections[$0] }) where other.id != connection.id {
            guard !other.isScoped || wrote(other) else { continue }
            guard let channel = other.liveChannel, let session = other.sessions[channel] else { continue }
            guard let peer = session.peer?.session ?? other.finishedPeers[channel] else { continue }
            let hello = SyncHello(
                device: log.device, session: session.id, replyTo: peer, vectors: [:], devices: [device])
            let frame = SyncFrame.message(
                channel: channel, bytes: SyncMessage.hello(hello).encoded(format: other.format)
            )
            .encoded()
            metrics.bytesOut.increment(by: Int64(frame.count))
            other.outbox.send(frame)
        }
    }
}
