/// A span of simulated time, in whole milliseconds, written in scenario files as `250ms`, `30s`, `5m` or `2h`.
///
/// A duration may be negative (a clock skew of `-90s` puts a device's clock behind). Its magnitude is at most
/// ``maximum`` (one year), so that adding durations to simulated timestamps cannot overflow.
public struct SimulatedDuration: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The length in milliseconds.
    public var milliseconds: Int64

    /// No time at all.
    public static let zero = SimulatedDuration(milliseconds: 0)

    /// The longest duration a scenario may give: 8760h, one year of 365 days.
    public static let maximum = SimulatedDuration(milliseconds: 8760 * 3_600_000)

    /// Creates a duration of `milliseconds`.
    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// A duration of whole seconds.
    public static func seconds(_ seconds: Int64) -> SimulatedDuration {
        SimulatedDuration(milliseconds: seconds * 1000)
    }

    /// The units a scenario file may use, longest first, with their length in milliseconds.
    static let units: [(suffix: String, milliseconds: Int64)] = [
        ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1),
    ]

    /// Reads a duration as a scenario file writes it: an optional `-`, decimal digits and one of the units `ms`, `s`,
    /// `m` or `h`, with nothing in between (`250ms`, `30s`, `-90s`, `5m`, `2h`).
    ///
    /// Returns `nil` for anything else, including fractions (`1.5s`), spaces (`90 s`), other units (`5min`) and
    /// durations longer than ``maximum``.
    public init?(parsing text: String) {
        var body = Substring(text)
        let negative = body.hasPrefix("-")
        if negative { body = body.dropFirst() }
        let digits = body.prefix { $0.isASCII && $0.isWholeNumber }
        let suffix = String(body.dropFirst(digits.count))
        guard !digits.isEmpty, digits.count <= 18,
            let unit = Self.units.first(where: { $0.suffix == suffix }),
            let value = Int64(String(digits))
        else { return nil }
        let (magnitude, overflow) = value.multipliedReportingOverflow(by: unit.milliseconds)
        guard !overflow, magnitude <= Self.maximum.milliseconds else { return nil }
        self.milliseconds = negative ? -magnitude : magnitude
    }

    /// The canonical spelling: the longest unit that divides the length exactly, such as `250ms`, `-90s`, `5m`, `2h`
    /// or `0s`; ``init(parsing:)`` reads it back to the same duration.
    public var description: String {
        guard milliseconds != 0 else { return "0s" }
        let unit = Self.units.first { milliseconds % $0.milliseconds == 0 }!
        return "\(milliseconds / unit.milliseconds)\(unit.suffix)"
    }

    /// Orders by length, negative durations first.
    public static func < (lhs: SimulatedDuration, rhs: SimulatedDuration) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }
}
