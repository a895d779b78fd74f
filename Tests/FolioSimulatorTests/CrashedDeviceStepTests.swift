import FolioSimulator
import FolioTestWorkPool
import Testing

/// A step that needs a device a `crash` stopped, or a `restart` of a device that runs, is known to be impossible from
/// the file alone: the file is refused (exit 2) at that step, before anything runs.
@Suite(.workPool) struct CrashedDeviceStepTests {
    typealias Code = ScenarioErrorCode

    @Test func aStepOnACrashedDeviceSaysWhereItCrashedAndHowToRestart() throws {
        let error = try #require(
            ScenarioParsing.error(
                ScenarioParsing.withDocuments(
                    """
                      - crash: {device: iPad}
                      - edit: {device: iPad, document: Notes, append: "b"}
                    """)))
        #expect(error.code == .deviceNotRunning)
        #expect(error.line == 11)
        #expect(error.column == 5)
        #expect(
            error.message
                == "'iPad' crashed at line 10 and has not restarted; restart it first: - restart: {device: iPad}")
    }

    @Test func everyActionOfACrashedDeviceIsRefusedUntilItRestarts() throws {
        let errors = ScenarioParsing.errors(
            ScenarioParsing.withDocuments(
                """
                  - crash: {device: Mac, during: save}
                  - save: {device: Mac, document: Notes}
                  - rename: {device: Mac, document: List, to: Groceries}
                  - resolve: {device: Mac, document: Notes, choose: latest}
                  - crash: {device: Mac}
                  - sync: all
                  - wait: 30s
                  - offline: [Mac]
                  - restart: {device: Mac}
                  - save: {device: Mac, document: Notes}
                """))
        #expect(errors.map(\.code) == Array(repeating: Code.deviceNotRunning, count: 4))
        #expect(
            errors.map(\.line) == [11, 12, 13, 14],
            "sync, wait and offline skip or leave a crashed device; after its restart it acts again")
        #expect(
            errors[3].message
                == "'Mac' crashed at line 10 and has not restarted: it cannot crash again; restart it first: - restart: {device: Mac}"
        )
    }

    @Test func restartingADeviceThatRunsIsRefused() throws {
        let errors = ScenarioParsing.errors(
            ScenarioParsing.withDocuments(
                """
                  - restart: {device: Phone}
                  - crash: {device: Phone, during: append}
                  - restart: {device: Phone}
                  - restart: {device: Phone}
                """))
        #expect(errors.map(\.code) == [.deviceNotRunning, .deviceNotRunning])
        #expect(errors.map(\.line) == [10, 13])
        #expect(
            errors[0].message
                == "'Phone' is running here: restart brings a device back after a crash; crash it first (- crash: {device: Phone}) or remove this step"
        )
    }

    @Test func anExpectationOnACrashedDeviceIsRefused() throws {
        let errors = ScenarioParsing.errors(
            ScenarioParsing.withDocuments(
                """
                  - crash: {device: iPad}
                  - expect: {device: iPad, document: Notes, exists: true}
                  - expect: {document: Notes, exists: true}
                  - expect: {device: Mac, document: Notes, exists: false}
                  - expect: {converged: true, lostChanges: 0}
                """))
        #expect(errors.map(\.line) == [11, 12], "a running device and the whole-run expectations may be checked")
        #expect(
            errors.map(\.message) == [
                "'iPad' crashed at line 10 and has not restarted, so it shows no document; restart it first: - restart: {device: iPad}",
                "this expect checks every device, but 'iPad' crashed at line 10 and has not restarted; restart it first "
                    + "(- restart: {device: iPad}) or name the device to check, such as device: Mac",
            ])
    }

    @Test func aCrashAndRestartInOrderIsAccepted() throws {
        let yaml = ScenarioParsing.withDocuments(
            """
              - edit: {device: iPad, document: Notes, append: "a"}
              - crash: {device: iPad, during: append}
              - edit: {device: Mac, document: Notes, append: "b"}
              - restart: {device: iPad}
              - edit: {device: iPad, document: Notes, append: "c"}
              - crash: {device: iPad}
              - restart: {device: iPad}
            """)
        #expect(ScenarioParsing.errors(yaml).isEmpty)
    }
}
