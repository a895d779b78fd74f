import FolioCore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@Suite(.workPool) struct TimestampTests {
    struct Example: Sendable, CustomTestStringConvertible {
        var milliseconds: Int64
        var text: String
        var testDescription: String { "\(milliseconds) ms" }
    }

    @Test(arguments: [
        Example(milliseconds: 0, text: "1970-01-01T00:00:00.000Z"),
        Example(milliseconds: 1, text: "1970-01-01T00:00:00.001Z"),
        Example(milliseconds: 1_767_225_600_000, text: "2026-01-01T00:00:00.000Z"),
        Example(milliseconds: 1_767_225_599_999, text: "2025-12-31T23:59:59.999Z"),
        Example(milliseconds: 951_827_696_789, text: "2000-02-29T12:34:56.789Z"),
        Example(milliseconds: 1_709_164_800_000, text: "2024-02-29T00:00:00.000Z"),
        Example(milliseconds: 253_402_300_799_999, text: "9999-12-31T23:59:59.999Z"),
        Example(milliseconds: -1, text: "1969-12-31T23:59:59.999Z"),
        Example(milliseconds: -999, text: "1969-12-31T23:59:59.001Z"),
        Example(milliseconds: -1000, text: "1969-12-31T23:59:59.000Z"),
        Example(milliseconds: -1001, text: "1969-12-31T23:59:58.999Z"),
        Example(milliseconds: -86_400_000, text: "1969-12-31T00:00:00.000Z"),
        Example(milliseconds: -86_400_001, text: "1969-12-30T23:59:59.999Z"),
        Example(milliseconds: -62_135_596_800_000, text: "0001-01-01T00:00:00.000Z"),
    ])
    func description(_ example: Example) {
        #expect(Timestamp(millisecondsSince1970: example.milliseconds).description == example.text)
    }

    /// Every wall time a change can carry (any `Int64`, even from a hostile peer) can be printed.
    @Test(arguments: [Int64.min, Int64.min + 1, Int64.max, Int64.max - 1])
    func extremeValuesPrintWithoutTrapping(_ milliseconds: Int64) {
        let text = Timestamp(millisecondsSince1970: milliseconds).description
        #expect(text.hasSuffix("Z"))
        #expect(text.contains("T"))
        print("\(milliseconds) ms prints as \(text)")
    }

    /// The calendar arithmetic agrees with Foundation's Gregorian calendar on random instants from 1601 to 9999.
    @Test func descriptionAgreesWithFoundation() {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for _ in 0..<500 {
            let seconds = Int64.random(in: -11_644_473_600...253_402_300_799, using: &generator)
            let milliseconds = Int64.random(in: 0...999, using: &generator)
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            func pad(_ value: Int, _ width: Int) -> String {
                String(repeating: "0", count: max(0, width - String(value).count)) + String(value)
            }
            let expected =
                "\(pad(parts.year!, 4))-\(pad(parts.month!, 2))-\(pad(parts.day!, 2))T"
                + "\(pad(parts.hour!, 2)):\(pad(parts.minute!, 2)):\(pad(parts.second!, 2)).\(pad(Int(milliseconds), 3))Z"
            let actual = Timestamp(millisecondsSince1970: seconds * 1000 + milliseconds).description
            #expect(actual == expected, "seed \(seed): \(seconds * 1000 + milliseconds) ms")
        }
    }

    @Test func ordersAndAdvances() {
        let start = Timestamp(millisecondsSince1970: 1_000)
        #expect(start.advanced(by: 500) == Timestamp(millisecondsSince1970: 1_500))
        #expect(start.advanced(by: -2_000) == Timestamp(millisecondsSince1970: -1_000))
        #expect(start < start.advanced(by: 1))
        #expect(Timestamp(millisecondsSince1970: -5) < Timestamp(millisecondsSince1970: 0))
    }

    @Test func aManualClockMovesOnlyWhenTold() {
        let clock = ManualClock(start: Timestamp(millisecondsSince1970: 1_767_225_600_000))
        #expect(clock.now() == clock.now())
        clock.advance(byMilliseconds: 1_500)
        #expect(clock.now().description == "2026-01-01T00:00:01.500Z")
        clock.advance(byMilliseconds: -3_000)
        #expect(clock.now().description == "2025-12-31T23:59:58.500Z")
        clock.set(Timestamp(millisecondsSince1970: 0))
        #expect(clock.now() == Timestamp(millisecondsSince1970: 0))
    }

    @Test func theSystemClockIsNearFoundationsClock() {
        let now = SystemClock().now()
        let foundation = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(abs(now.millisecondsSince1970 - foundation) < 5_000)
        #expect(now > Timestamp(millisecondsSince1970: 1_704_067_200_000), "the clock reads before 2024")
    }
}
