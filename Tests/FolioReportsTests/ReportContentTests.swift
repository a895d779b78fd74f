import FolioConflicts
import FolioCore
import FolioDocuments
import FolioModels
import Foundation
import Testing

@testable import FolioReports

/// What a report says of real conflicts made on two devices.
@Suite struct ReportContentTests {
    let devices: TwoDevices

    init() throws {
        devices = try TwoDevices()
    }

    @Test func anOpenTextConflictShowsBothVersionsAndTheirLineDiffs() async throws {
        let conflict = try await TextConflict(devices)
        let documents = DocumentReport.assemble(try await conflict.captures(), devices: devices.devices)
        let document = try #require(documents.first)
        #expect(documents.count == 1)
        #expect(document.name == "Notes")
        #expect(document.type == "com.folio.text")
        #expect(document.conflicts.count == 1, "both devices see the same conflict: one entry")
        let entry = try #require(document.conflicts.first)
        #expect(entry.status == .open)
        #expect(entry.seenBy == ["iPad", "Mac"])
        #expect(entry.strategy == "askUser")
        #expect(entry.resolution == nil)
        #expect(entry.ancestorHead != nil)
        #expect(entry.versions.count == 2)
        #expect(Set(entry.versions.map(\.device)) == ["iPad", "Mac"])
        #expect(entry.versions.filter(\.isCurrent).count == 1)
        let iPad = try #require(entry.versions.first { $0.device == "iPad" })
        let mac = try #require(entry.versions.first { $0.device == "Mac" })
        #expect(
            iPad.changes == [
                ChangeEntry(kind: "changed", location: "line 2", base: ["two"], version: ["two from the iPad"])
            ])
        #expect(mac.changes.map(\.kind) == ["added"])
        #expect(mac.changes.first?.version == ["four from the Mac"])
        #expect(iPad.time == "2026-01-01T00:00:01.000Z")
        #expect(mac.time == "2026-01-01T00:00:05.000Z")
        #expect(iPad.vector.map(\.device) == ["iPad"], "the iPad's version never saw the Mac's edit")
        #expect(document.losses.isEmpty, "nothing is settled, so nothing is discarded")
        #expect(document.devices.map(\.device) == ["iPad", "Mac"])
        for state in document.devices {
            #expect(state.exists)
            #expect(state.state == ["inConflict"])
            #expect(state.heads.count == 2)
            #expect(state.vector == [VectorEntry(device: "iPad", seq: 3), VectorEntry(device: "Mac", seq: 1)])
        }
        let kinds = document.graph.map(\.kind)
        #expect(kinds == ["create", "baseline", "edit", "edit"])
        #expect(document.graph.map(\.id) == ["iPad:1", "iPad:2", "Mac:1", "iPad:3"], "equal lamports: by device name")
        #expect(document.graph[2].parents == ["iPad:2"])
    }

    @Test func eachDeviceSaysWhoTypedTheTextItShows() async throws {
        let (a, b) = try devices.libraries(ConflictPolicy(default: .merge))
        let iPad = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "one\ntwo\n"))
        try exchange(a, b, iPad.id)
        let mac = try await b.open(iPad.id, as: TextDocument.self)
        try await iPad.edit(.insert(at: 0, text: "zero\n"))
        try await iPad.commit()
        try await mac.edit(.insert(at: 8, text: "three\n"))
        try await mac.commit()
        try exchange(a, b, iPad.id)
        try await iPad.refresh()
        try await mac.refresh()
        let document = try #require(
            DocumentReport.assemble(
                [try await DocumentCapture.capture(iPad), try await DocumentCapture.capture(mac)],
                devices: devices.devices
            ).first)
        let expected = [
            AuthoredStretch(start: 0, text: "zero\n", change: "iPad:3", device: "iPad"),
            AuthoredStretch(start: 5, text: "one\ntwo\n", change: "iPad:2", device: "iPad"),
            AuthoredStretch(start: 13, text: "three\n", change: "Mac:1", device: "Mac"),
        ]
        #expect(document.devices.map(\.authorship) == [expected, expected], "the create's contents, then each edit")
        let markdown = report([try await DocumentCapture.capture(mac)], devices: devices).markdown()
        #expect(markdown.contains("| `three↵` | `Mac:1` |"))
        #expect(
            report([try await DocumentCapture.capture(mac)], devices: devices).html().contains("<code>three↵</code>"))

        // A capture reads the versions, which commits the open group first: the new stretch is the edit's.
        try await mac.edit(.insert(at: 0, text: "!"))
        let later = DocumentReport.assemble([try await DocumentCapture.capture(mac)], devices: devices.devices)
        #expect(
            later.first?.devices.first?.authorship?.first
                == AuthoredStretch(start: 0, text: "!", change: "Mac:2", device: "Mac"))
        #expect(later.first?.devices.first?.authorship?.map(\.text).joined() == "!zero\none\ntwo\nthree\n")
        try await iPad.close()
        try await mac.close()
    }

    @Test func latestWinsOnRecordsIsResolvedAndItsLossIsInTheLedger() async throws {
        let conflict = try await RecordsConflict(devices)
        let document = try #require(
            DocumentReport.assemble(try await conflict.captures(), devices: devices.devices).first)
        #expect(document.conflicts.count == 1, "the Mac's log holds the iPad's resolution: one entry")
        let entry = try #require(document.conflicts.first)
        #expect(entry.status == .resolved)
        #expect(entry.seenBy == ["iPad", "Mac"])
        #expect(entry.strategy == "latestWins")
        let resolution = try #require(entry.resolution)
        #expect(resolution.resolvedBy == "iPad")
        #expect(resolution.strategy == "latestWins")
        let mac = try #require(entry.versions.first { $0.device == "Mac" })
        let iPad = try #require(entry.versions.first { $0.device == "iPad" })
        #expect(resolution.chosen == [mac.head])
        #expect(resolution.discarded == [iPad.head])
        #expect(
            iPad.changes == [ChangeEntry(kind: "changed", location: "r1.city", base: ["Oslo"], version: ["Bergen"])])
        #expect(mac.changes == [ChangeEntry(kind: "changed", location: "r1.city", base: ["Oslo"], version: ["Tromsø"])])

        #expect(document.losses.count == 1)
        let loss = try #require(document.losses.first)
        #expect(loss.resolution == resolution.head)
        #expect(loss.resolvedBy == "iPad")
        #expect(loss.strategy == "latestWins")
        #expect(
            loss.discarded == [
                DiscardedVersionEntry(
                    head: iPad.head, device: "iPad", time: "2026-01-01T00:00:01.000Z",
                    contents: ["r1: city=Bergen, name=Ann"])
            ])

        for state in document.devices {
            #expect(state.state == ["normal"])
            #expect(state.contents == ["r1: city=Tromsø, name=Ann"])
        }
        let last = try #require(document.graph.last)
        #expect(last.kind == "resolution(latestWins)")
        #expect(last.isResolution)
        #expect(Set(last.parents) == ["iPad:3", "Mac:1"])
    }

    @Test func theHistoryRebuildsASettledConflictFromItsResolution() async throws {
        let conflict = try await RecordsConflict(devices)
        let history = try await conflict.mac.conflictHistory()
        #expect(history.count == 1)
        let record = try #require(history.first)
        #expect(record.isResolved)
        #expect(record.strategy == .latestWins)
        #expect(record.resolvedBy?.name == "iPad")
        #expect(record.versions.count == 2)
        #expect(record.versions.filter(\.isConflict).isEmpty, "a settled conflict competes with nothing now")
        #expect(record.discarded.count == 1)
        let discarded = try #require(record.versions.first { $0.heads.contains(record.discarded[0]) })
        #expect(discarded.contents["r1"]?["city"] == "Bergen")
        #expect(discarded.ancestor["r1"]?["city"] == "Oslo")
        #expect(try await conflict.mac.unresolvedConflict() == nil)
    }

    @Test func aDeviceWithoutTheDocumentIsShownAbsent() async throws {
        let conflict = try await TextConflict(devices)
        let phone = Device(id: DeviceID(using: SeededIdentifierSource(seed: 99)), name: "Phone")
        let captures = try await conflict.captures() + [DocumentCapture.absent(conflict.iPad.id, on: phone)]
        let document = try #require(DocumentReport.assemble(captures, devices: devices.devices + [phone]).first)
        #expect(document.devices.map(\.device) == ["iPad", "Mac", "Phone"])
        #expect(document.devices[2] == DocumentOnDevice(device: "Phone", exists: false, name: "", state: ["absent"]))
        #expect(document.name == "Notes")
    }

    @Test func aDeletedDocumentIsCapturedAsNotExisting() async throws {
        let (a, _) = try devices.libraries(ConflictPolicy())
        let notes = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "hi\n"))
        try await a.delete(notes.id)
        let captures = try await DocumentCapture.captures(of: a)
        let document = try #require(DocumentReport.assemble(captures, devices: devices.devices).first)
        #expect(document.devices.first?.exists == false)
        #expect(document.devices.first?.state.contains("editingDisabled") == true)
        #expect(document.graph.last?.kind == "delete")
    }
}

/// How the built-in models show their contents.
@Suite struct ReportLineTests {
    @Test func modelsRenderTheirContentsAsLines() throws {
        #expect(TextDocument(text: "one\ntwo\n").reportLines() == ["one", "two"])
        #expect(TextDocument(text: "one\n\nlast").reportLines() == ["one", "", "last"])
        #expect(TextDocument(text: "").reportLines() == [])
        let records = try RecordsDocument(records: [
            .init(id: "r2", fields: ["name": "Bo"]), .init(id: "r1", fields: ["name": "Ann", "city": "Oslo"]),
        ])
        #expect(
            records.reportLines() == ["r2: name=Bo", "r1: city=Oslo, name=Ann"], "records in order, fields by name")
        let pages = try PagesDocument(text: "Title\n", images: ["cover.png": Data(count: 1024)])
        let lines = pages.reportLines()
        #expect(lines.count == 2)
        #expect(lines[0] == "Title")
        #expect(lines[1].hasPrefix("images/cover.png: 1024 bytes, sha256 "))
    }
}
