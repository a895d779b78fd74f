import FolioConflicts
import FolioCore
import FolioDocuments
import FolioModels
import FolioReports
import Foundation

/// A text edited apart on both devices under `askUser`: both hold an open conflict of two versions.
struct TextConflict {
    let iPad: Document<TextDocument>
    let mac: Document<TextDocument>
    let libraries: (DocumentLibrary, DocumentLibrary)

    init(_ devices: TwoDevices, name: String = "Notes") async throws {
        libraries = try devices.libraries(ConflictPolicy(default: .askUser))
        let (a, b) = libraries
        iPad = try await a.create(TextDocument.self, named: name, contents: TextDocument(text: "one\ntwo\nthree\n"))
        try exchange(a, b, iPad.id)
        mac = try await b.open(iPad.id, as: TextDocument.self)
        devices.iPad.clock.advance(byMilliseconds: 1_000)
        try await iPad.edit(.replace("one\ntwo from the iPad\nthree\n"))
        devices.mac.clock.advance(byMilliseconds: 5_000)
        try await mac.edit(.replace("one\ntwo\nthree\nfour from the Mac\n"))
        try exchange(a, b, iPad.id)
        try await iPad.refresh()
        try await mac.refresh()
    }

    func captures() async throws -> [DocumentCapture] {
        [try await DocumentCapture.capture(iPad), try await DocumentCapture.capture(mac)]
    }
}

/// Records edited apart under `latestWins`: the iPad settles the conflict (the Mac's later edit wins) and the
/// Mac receives the resolution.
struct RecordsConflict {
    let iPad: Document<RecordsDocument>
    let mac: Document<RecordsDocument>

    init(_ devices: TwoDevices) async throws {
        let (a, b) = try devices.libraries(ConflictPolicy(default: .latestWins))
        let initial = try RecordsDocument(records: [.init(id: "r1", fields: ["name": "Ann", "city": "Oslo"])])
        iPad = try await a.create(RecordsDocument.self, named: "Contacts", contents: initial)
        try exchange(a, b, iPad.id)
        mac = try await b.open(iPad.id, as: RecordsDocument.self)
        devices.iPad.clock.advance(byMilliseconds: 1_000)
        try await iPad.edit(.set(record: "r1", field: "city", value: "Bergen"))
        devices.mac.clock.advance(byMilliseconds: 10_000)
        try await mac.edit(.set(record: "r1", field: "city", value: "Tromsø"))
        try exchange(a, b, iPad.id)
        try await iPad.refresh()
        try exchange(a, b, iPad.id)
        try await mac.refresh()
    }

    func captures() async throws -> [DocumentCapture] {
        [try await DocumentCapture.capture(iPad), try await DocumentCapture.capture(mac)]
    }
}

/// A scenario-style report of `captures`.
func report(_ captures: [DocumentCapture], devices: TwoDevices, title: String = "Two devices edit apart")
    -> ConflictReport
{
    let assembler = ReportAssembler(captures: captures, devices: devices.devices)
    return ConflictReport(
        title: title, description: "Both devices edit offline, then sync.", kind: .scenario,
        source: "Scenarios/two.yaml",
        seed: 7, strategy: "askUser",
        outcome: .init(failures: [.init(step: 2, line: 9, message: "expected 1 version, found 2")]),
        devices: assembler.devices,
        timeline: [
            TimelineEntry(
                step: 1, line: 5, time: TwoDevices.start, action: "create iPad Notes", events: ["iPad:1 create"]),
            TimelineEntry(
                step: 2, line: 9, time: TwoDevices.start.advanced(by: 5_000), action: "expect Notes",
                failure: "expected 1 version, found 2"),
        ],
        documents: assembler.documents())
}
