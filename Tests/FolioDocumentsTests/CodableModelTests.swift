import Folio
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A model whose state and operations are `Codable` gets its codec for free: deterministic bytes, hostile bytes
/// refused with typed errors, and a history that replays and syncs like a built-in model's.
@Suite(.workPool) struct CodableModelTests {
    /// Items with counts, in a dictionary (whose iteration order differs between instances).
    struct Pantry: DocumentModel, Codable, Equatable {
        static let documentType = DocumentType(identifier: "com.example.pantry", fileExtensions: ["pantry"])
        var counts: [String: Int] = [:]
        var note = ""

        enum Operation: DocumentOperation, Codable {
            case set(item: String, count: Int?)
            case note(String)
        }

        mutating func apply(_ operation: Operation) throws -> Operation {
            switch operation {
            case .set(let item, let count):
                guard (count ?? 0) >= 0 else { throw ModelError(.invalidOperation, "a count cannot be negative") }
                let old = counts[item]
                counts[item] = count
                return .set(item: item, count: old)
            case .note(let text):
                defer { note = text }
                return .note(note)
            }
        }
    }

    @Test func equalStatesHaveEqualBytesWhateverTheirHistory() throws {
        let items = (0..<200).map { "item \($0)" }
        var forward = Pantry()
        for (index, item) in items.enumerated() { forward.counts[item] = index }
        var backward = Pantry()
        for (index, item) in items.enumerated().reversed() { backward.counts[item] = index }
        #expect(forward == backward)
        #expect(forward.contents() == backward.contents())
        #expect(try Pantry(contents: forward.contents()) == forward)
    }

    @Test func hostileBytesAreRefusedWithTypedErrors() throws {
        #expect(throws: ModelError.self) { try Pantry(contents: .data(Data("not json".utf8))) }
        #expect(throws: ModelError.self) { try Pantry(contents: .package(FilePackage())) }
        var writer = BinaryWriter()
        writer.write(varint: 1)
        writer.write(lengthPrefixed: Data(#"{"unknown":{}}"#.utf8))
        #expect(throws: CodecError.self) { try Pantry.Operation.decodeGroup(Data(writer.bytes)) }
        #expect(throws: CodecError.self) { try Pantry.Operation.decodeGroup(Data([1, 200])) }
        let group = Pantry.Operation.encodeGroup([.set(item: "figs", count: 3), .note("dry")])
        #expect(try Pantry.Operation.decodeGroup(group) == [.set(item: "figs", count: 3), .note("dry")])
    }

    @Test func aCodableModelEditsReopensAndSyncs() async throws {
        let iPad = try LibraryFixture(seed: 21)
        let mac = try LibraryFixture(seed: 22)
        let folder = try TemporaryDirectory()
        let a = try iPad.library()
        let b = try mac.library()
        let pantry = try await a.create(Pantry.self, named: "Pantry", in: .shared)
        try await pantry.edit(.set(item: "rice", count: 2))
        try await pantry.edit(.set(item: "figs", count: 5))
        try await pantry.edit(.note("buy more"))
        try await pantry.undo()
        try await pantry.save()
        #expect(try await pantry.fileURL.lastPathComponent == "Pantry.pantry")
        let expected = Pantry(counts: ["rice": 2, "figs": 5], note: "")
        #expect(await pantry.model == expected)
        let file = try await pantry.fileURL
        #expect(try Pantry(contents: .data(Data(contentsOf: file))) == expected)
        try await pantry.close()

        let reopened = try await a.open(named: "Pantry", as: Pantry.self)
        #expect(await reopened.model == expected)
        try await a.sync(through: FolderTransport(root: folder.url))
        try await b.sync(through: FolderTransport(root: folder.url))
        let onMac = try await b.open(named: "Pantry", as: Pantry.self)
        #expect(await onMac.model == expected)
        #expect(await onMac.model.contents() == reopened.model.contents())
    }
}
