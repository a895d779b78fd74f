import FolioCore
import FolioTestWorkPool
import Foundation
import Testing

/// Device and document identities survive as text and through Codable, so an app can keep them where it likes.
@Suite(.workPool) struct IdentityTextTests {
    let text = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"

    @Test func aDeviceIDRoundTripsThroughItsText() throws {
        let device = try #require(DeviceID(text))
        #expect(device.description == text)
        #expect(DeviceID(device.description) == device)
        #expect(DeviceID(text.uppercased()) == device)
    }

    @Test func aDocumentIDRoundTripsThroughItsText() throws {
        let document = try #require(DocumentID(text))
        #expect(DocumentID(document.description) == document)
    }

    @Test(arguments: [
        "", "6ba7b810", "6ba7b810-9dad-11d1-80b4-00c04fd430c8x", "6ba7b810+9dad-11d1-80b4-00c04fd430c8",
        "zba7b810-9dad-11d1-80b4-00c04fd430c8", String(repeating: "a", count: 1_000_000),
    ])
    func textThatIsNotAnIdentityIsRefused(_ bad: String) {
        #expect(DeviceID(bad) == nil)
        #expect(DocumentID(bad) == nil)
    }

    @Test func identitiesEncodeAsTheirTextAndDecodeBack() throws {
        struct Saved: Codable, Equatable {
            var device: DeviceID
            var document: DocumentID
        }
        let saved = Saved(device: try #require(DeviceID(text)), document: try #require(DocumentID(text)))
        let json = try JSONEncoder().encode(saved)
        #expect(String(decoding: json, as: UTF8.self).contains("\"\(text)\""))
        #expect(try JSONDecoder().decode(Saved.self, from: json) == saved)
    }

    @Test func decodingTextThatIsNotAnIdentityThrows() {
        let json = Data(#"["not an identity"]"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([DeviceID].self, from: json) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([DocumentID].self, from: json) }
    }
}
