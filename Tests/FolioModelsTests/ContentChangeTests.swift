import FolioCore
import FolioModels
import FolioTestWorkPool
import Foundation
import Testing

/// What a version shows against its ancestor: lines for a text, fields for records, members for a package.
@Suite(.workPool) struct ContentChangeTests {
    @Test func textChangesAreLineHunks() {
        let base = TextDocument(text: "one\ntwo\nthree\n")
        let version = TextDocument(text: "one\n2\nthree\nfour\n")
        #expect(
            version.changes(from: base) == [
                ContentChange(location: "line 2", kind: .changed, base: ["two\n"], version: ["2\n"]),
                ContentChange(location: "after line 3", kind: .added, base: [], version: ["four\n"]),
            ])
        #expect(base.changes(from: base).isEmpty)
        #expect(
            TextDocument(text: "one\nthree\n").changes(from: base)
                == [ContentChange(location: "line 2", kind: .removed, base: ["two\n"], version: [])])
    }

    @Test func recordChangesAreFields() throws {
        let base = try RecordsDocument(records: [
            .init(id: "r1", fields: ["name": "Ann", "city": "Rome"]), .init(id: "r2", fields: ["name": "Bob"]),
        ])
        let version = try RecordsDocument(records: [
            .init(id: "r1", fields: ["name": "Ann", "city": "Oslo"]), .init(id: "r3", fields: ["name": "Cy"]),
        ])
        #expect(
            version.changes(from: base) == [
                ContentChange(location: "r1.city", kind: .changed, base: ["Rome"], version: ["Oslo"]),
                ContentChange(location: "r2.name", kind: .removed, base: ["Bob"], version: []),
                ContentChange(location: "r3.name", kind: .added, base: [], version: ["Cy"]),
            ])
    }

    @Test func packageChangesAreMembers() throws {
        let base = try PagesDocument(text: "a\n", images: ["cover.png": Data([1, 2, 3])])
        let version = try PagesDocument(text: "a\nb\n", images: ["cover.png": Data([1, 2, 4]), "x.png": Data([9])])
        let changes = version.changes(from: base)
        #expect(changes.map(\.location) == ["text.txt after line 1", "images/cover.png", "images/x.png"])
        #expect(changes.map(\.kind) == [.added, .changed, .added])
        #expect(changes[1].base == [PagesDocument.imageSummary(Data([1, 2, 3]))])
    }
}
