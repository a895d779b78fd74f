import FolioSimulator
import FolioTestWorkPool
import Testing

@Suite(.workPool) struct SimulatedDurationTests {
    @Test(
        arguments: [
            ("250ms", 250), ("30s", 30_000), ("5m", 300_000), ("2h", 7_200_000), ("-90s", -90_000), ("0s", 0),
            ("0ms", 0), ("-0s", 0), ("1500ms", 1500), ("8760h", 8760 * 3_600_000),
        ] as [(String, Int64)])
    func readsDurations(text: String, milliseconds: Int64) {
        #expect(SimulatedDuration(parsing: text)?.milliseconds == milliseconds)
    }

    @Test(arguments: [
        "90 s", "1.5s", "5min", "30", "s", "-s", "", "+5s", "5S", "1h30m", " 5s", "5s ", "--5s", "8761h",
        "99999999999999999999ms", "５s",
    ])
    func refusesNonDurations(text: String) {
        #expect(SimulatedDuration(parsing: text) == nil)
    }

    @Test(
        arguments: [0, 1, 250, 1000, 1001, 60_000, 90_000, -90_000, 3_600_000, 7_200_000, -1, 8760 * 3_600_000]
            as [Int64])
    func canonicalSpellingReadsBack(milliseconds: Int64) {
        let duration = SimulatedDuration(milliseconds: milliseconds)
        #expect(SimulatedDuration(parsing: duration.description) == duration)
    }

    @Test func canonicalSpellingUsesTheLongestExactUnit() {
        #expect(SimulatedDuration(milliseconds: 250).description == "250ms")
        #expect(SimulatedDuration(milliseconds: 90_000).description == "90s")
        #expect(SimulatedDuration(milliseconds: -90_000).description == "-90s")
        #expect(SimulatedDuration(milliseconds: 300_000).description == "5m")
        #expect(SimulatedDuration(milliseconds: 7_200_000).description == "2h")
        #expect(SimulatedDuration.zero.description == "0s")
    }
}
