import Testing

@testable import FolioPostgres

/// What a notification of `folio_changes` says, and when a copy that read may skip its next read.
@Suite struct LogFreshnessMarkTests {
    typealias Notification = LogFreshness.Notification
    typealias Mark = LogFreshness.Mark

    /// The library, position and origin a payload names, `-` for what it does not.
    private func read(_ payload: String) -> [String] {
        let notification = Notification(payload: payload)
        return [notification.library, notification.position.map(String.init) ?? "-", notification.origin ?? "-"]
    }

    @Test func aNotificationNamesThePositionTheProcessAndTheLibrary() {
        #expect(read("42:3F2A-77:notes") == ["notes", "42", "3F2A-77"])
        #expect(read("7::team.notes") == ["team.notes", "7", ""])
    }

    @Test func aNotificationOfAnOlderFolioNamesTheLibraryAlone() {
        #expect(read("notes") == ["notes", "-", "-"])
        // A payload that is not `POSITION:ORIGIN:LIBRARY` is taken whole as a name (no library name has a colon).
        #expect(read("x:notes") == ["x:notes", "-", "-"])
        #expect(read("x:y:notes") == ["x:y:notes", "-", "-"])
    }

    @Test func aCopyReadsAgainOnlyWhenTheMarkTellsOfWhatItMayLack() {
        let read = Mark(listening: 1, notices: 0, notified: 10)
        #expect(Mark(listening: 1, notices: 0, notified: 10).isHeld(by: read, upTo: 10))
        // Its own write took it to 12 and notified 12: nothing to read.
        #expect(Mark(listening: 1, notices: 0, notified: 12).isHeld(by: read, upTo: 12))
        // Another process notified a position past what the copy holds.
        #expect(!Mark(listening: 1, notices: 0, notified: 13).isHeld(by: read, upTo: 12))
        // A notification without a position, listening started again, or no read yet.
        #expect(!Mark(listening: 1, notices: 1, notified: 10).isHeld(by: read, upTo: 10))
        #expect(!Mark(listening: 2, notices: 0, notified: 10).isHeld(by: read, upTo: 10))
        #expect(!Mark(listening: 1, notices: 0, notified: 10).isHeld(by: nil, upTo: 10))
    }
}
