import FolioTestWorkPool
import Foundation
import Testing

@testable import FolioReports
@testable import folio

/// What `folio inspect` says comes partly from peers (document and device names): each name stays on its line.
@Suite(.workPool) struct InspectMessageTests {
    @Test func namesFromPeersCannotStartALineOfTheirOwn() {
        let version = { (device: String) in
            VersionEntry(device: device, time: "t", vector: [], head: "h", heads: ["h"], isCurrent: false, changes: [])
        }
        let report = ConflictReport(
            title: "library", kind: .library,
            documents: [
                DocumentReport(
                    id: "d", name: "Notes\nfolio: all good", type: "com.folio.text",
                    conflicts: [
                        ConflictEntry(
                            id: "c", status: .open, versions: [version("iPad"), version("Mac\nfolio: all good")])
                    ])
            ])
        let message = InspectCommand.attention(in: report, at: "/lib")
        #expect(message.split(separator: "\n").count == 1, "\(message)")
        #expect(!message.contains("\nfolio: all good"))
        #expect(message.hasPrefix("/lib: Notes"))
    }
}
