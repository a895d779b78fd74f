import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import Foundation
import Testing

/// Changes a hostile or broken peer makes that no library call would: a baseline or a resolution whose contents the
/// model refuses, a resolution that names versions it did not settle, a second creation. None of them makes a
/// document unopenable or renames, moves or retypes it, and every device reads them the same way.
///
/// The forger appends to its own store what it likes (or builds a change by hand), and the others ingest it as a
/// sync would.
@Suite struct ForgedChangeTests {
    /// "Notes" made on the iPad (device 0), known to the forger (device 1) and to a third device (device 2).
    struct Peers {
        let fixtures: [LibraryFixture]
        let libraries: [DocumentLibrary]
        let id: DocumentID

        var iPad: DocumentLibrary { libraries[0] }
        var forger: DocumentLibrary { libraries[1] }
        var third: DocumentLibrary { libraries[2] }

        init(text: String = "mine\n", in container: DocumentContainer = .local) async throws {
            fixtures = try (1...3).map { try LibraryFixture(seed: UInt64($0)) }
            libraries = try fixtures.map { try $0.library() }
            let notes = try await libraries[0].create(
                TextDocument.self, named: "Notes", in: container, contents: TextDocument(text: text))
            try await notes.close()
            id = notes.id
            for index in 1..<3 { try deliver(from: 0, to: index) }
        }

        /// Device `to` ingests what device `from` has of the document and it lacks.
        func deliver(from: Int, to: Int) throws {
            try libraries[to].store.ingest(
                trusting: try libraries[from].store.changes(of: id, since: libraries[to].store.vector(of: id)))
        }

        /// What device `index` shows when it opens the document, and the changes whose contents it refused.
        func shown(on index: Int) async throws -> (text: String, refused: [ChangeHash], versions: Int) {
            let document = try await libraries[index].open(id, as: TextDocument.self)
            let shown = (await document.model.text, await document.refusedContents, try await document.versionCount())
            try await document.close()
            return shown
        }
    }

    static let refusedContents: [Data] = [
        Data([0xDE, 0xAD, 0xBE, 0xEF]),  // not contents at all
        DocumentContents.data(Data([0xFF, 0xFE])).encoded(),  // contents, but not UTF-8 text
        Data(),
    ]

    /// The finding: a baseline the model refuses made the document unopenable on every device.
    @Test(arguments: refusedContents)
    func aBaselineTheModelRefusesCarriesNoContents(contents: Data) async throws {
        let peers = try await Peers()
        let open = try await peers.iPad.open(peers.id, as: TextDocument.self)
        let forged = try peers.forger.store.append(.baseline(contents: contents), to: peers.id)
        try peers.deliver(from: 1, to: 0)
        try peers.deliver(from: 1, to: 2)

        // An open document picks it up without failing, and keeps showing what it showed.
        try await open.refresh()
        #expect(await open.model.text == "mine\n")
        #expect(await open.refusedContents == [forged.hash])
        try await open.close()
        for device in 0..<3 {
            let shown = try await peers.shown(on: device)
            #expect(shown.text == "mine\n", "device \(device)")
            #expect(shown.refused == [forged.hash], "device \(device)")
            #expect(shown.versions == 1)
        }

        // Editing goes on from there, and every device agrees.
        let document = try await peers.iPad.open(peers.id, as: TextDocument.self)
        try await document.edit(.append("more\n"))
        try await document.save()
        try await document.close()
        #expect(try peers.fixtures[0].text(at: peers.fixtures[0].documentFile("Notes.txt")) == "mine\nmore\n")
        try peers.deliver(from: 0, to: 2)
        #expect(try await peers.shown(on: 2).text == "mine\nmore\n")
        #expect(try await peers.shown(on: 0).text == "mine\nmore\n", "reopened from its checkpoint")
    }

    /// Two devices edit apart, so two versions compete; returns the text of the version every device shows.
    func makeConflict(_ peers: Peers) async throws -> String {
        for (device, text) in [(0, "from the iPad\n"), (1, "from the forger\n")] {
            let document = try await peers.libraries[device].open(peers.id, as: TextDocument.self)
            try await document.edit(.append(text))
            try await document.close()
        }
        try peers.deliver(from: 0, to: 1)
        let document = try await peers.forger.open(peers.id, as: TextDocument.self)
        #expect(try await document.versionCount() == 2)
        let current = await document.model.text
        try await document.close()
        return current
    }

    @Test(arguments: refusedContents)
    func aResolutionWhoseContentsTheModelRefusesKeepsTheVersionShown(contents: Data) async throws {
        let peers = try await Peers()
        let current = try await makeConflict(peers)
        let heads = try peers.forger.store.heads(of: peers.id).map(\.hash)
        let forged = try peers.forger.store.append(
            .resolution(Resolution(strategy: .userChoice, chosen: [], discarded: heads, contents: contents)),
            to: peers.id)
        for device in [0, 2] { try peers.deliver(from: 1, to: device) }
        for device in 0..<3 {
            let shown = try await peers.shown(on: device)
            #expect(shown.text == current, "device \(device)")
            #expect(shown.refused == [forged.hash], "device \(device)")
            #expect(shown.versions == 1, "the resolution joined the versions")
        }
    }

    /// The finding: a resolution naming a chosen version the log does not hold made the document unopenable.
    @Test func aResolutionChoosingAnUnknownVersionIsReadByItsParents() async throws {
        let peers = try await Peers()
        let current = try await makeConflict(peers)
        let heads = try peers.forger.store.heads(of: peers.id).map(\.hash)
        let unknown = ChangeHash(hashing: Array("no such change".utf8))
        try peers.forger.store.append(
            .resolution(Resolution(strategy: .userChoice, chosen: [unknown], discarded: heads)), to: peers.id)
        for device in [0, 2] { try peers.deliver(from: 1, to: device) }
        for device in 0..<3 {
            let shown = try await peers.shown(on: device)
            #expect(shown.text == current, "device \(device)")
            #expect(shown.versions == 1)
        }
    }

    /// A resolution may keep only versions it settled (its parents). Naming another change would show that
    /// change's contents on the devices that hold it and fail on the others.
    @Test func aResolutionChoosingAChangeItDidNotSettleIsReadByItsParents() async throws {
        let peers = try await Peers()
        // The third device edits; only the iPad hears of it.
        let third = try await peers.third.open(peers.id, as: TextDocument.self)
        try await third.edit(.append("from the third\n"))
        try await third.close()
        try peers.deliver(from: 2, to: 0)
        let elsewhere = try #require(try peers.third.store.heads(of: peers.id).first)
        // The forger, which has not seen that edit, "resolves" in its favour, and claims to discard another.
        let forged = try peers.forger.store.append(
            .resolution(Resolution(strategy: .userChoice, chosen: [elsewhere.hash], discarded: [elsewhere.hash])),
            to: peers.id)
        try peers.deliver(from: 1, to: 0)

        #expect(try await peers.shown(on: 1).text == "mine\n", "the forger itself shows the resolution's parent")
        let document = try await peers.iPad.open(peers.id, as: TextDocument.self)
        let versions = try await document.versions()
        #expect(versions.count == 2, "the third's edit and the resolution compete")
        #expect(versions.first { $0.heads.contains(forged.hash) }?.contents.text == "mine\n")
        #expect(versions.first { $0.heads.contains(elsewhere.hash) }?.contents.text == "mine\nfrom the third\n")
        #expect(try await document.lossLedger().map(\.discarded.count) == [0], "it discarded nothing it settled")
        try await document.close()
    }

    // MARK: Creation

    /// A create made after the document's history: the document keeps its name, place, type and deletion.
    @Test func aSecondCreateRenamesMovesRetypesAndRestoresNothing() async throws {
        let peers = try await Peers(in: .shared)
        try await peers.iPad.rename(peers.id, to: "Ideas")
        try peers.deliver(from: 0, to: 1)
        try peers.forger.store.append(
            .lifecycle(.create(name: "Forged", type: RecordsDocument.documentType.identifier, container: .local)),
            to: peers.id)
        try peers.deliver(from: 1, to: 0)

        let info = try #require(try await peers.iPad.info(of: peers.id))
        #expect(info.displayName == "Ideas")
        #expect(info.container == .shared)
        #expect(info.typeIdentifier == TextDocument.documentType.identifier)
        #expect(try await peers.shown(on: 0).text == "mine\n")

        try await peers.iPad.delete(peers.id)
        try peers.deliver(from: 0, to: 1)
        try peers.forger.store.append(
            .lifecycle(.create(name: "Forged", type: TextDocument.documentType.identifier, container: .shared)),
            to: peers.id)
        try peers.deliver(from: 1, to: 0)
        #expect(try await peers.iPad.info(of: peers.id)?.isDeleted == true, "a create is not a restore")
        #expect(try await peers.iPad.documents().isEmpty)
    }

    /// The finding: a create with a low lamport, made on the creation only and dated late, won the name from
    /// every rename made since (latest wins among concurrent settings).
    @Test func aLateCreateWithALowLamportDoesNotWinTheName() async throws {
        let peers = try await Peers()
        try await peers.iPad.rename(peers.id, to: "Ideas")
        let creation = try #require(try peers.iPad.store.lifecycleChanges(of: peers.id).first)
        let forgerDevice = peers.forger.device.id
        var vector = creation.vector
        vector[forgerDevice] = 1
        let forged = Change(
            document: peers.id, id: ChangeID(device: forgerDevice, seq: 1), parents: [creation.hash], vector: vector,
            lamport: creation.lamport + 1,
            wallTime: Timestamp(millisecondsSince1970: LibraryFixture.start.millisecondsSince1970 + 86_400_000),
            kind: .lifecycle(.create(name: "Forged", type: RecordsDocument.documentType.identifier, container: .shared))
        )
        try peers.iPad.store.ingest(trusting: [forged])
        try peers.deliver(from: 0, to: 2)

        for library in [peers.iPad, peers.third] {
            let info = try #require(try await library.info(of: peers.id))
            #expect(info.displayName == "Ideas")
            #expect(info.container == .local)
            #expect(info.typeIdentifier == TextDocument.documentType.identifier)
        }
        #expect(try await peers.shown(on: 2).text == "mine\n")
    }
}
