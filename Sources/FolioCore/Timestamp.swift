/// A device's wall-clock reading, in milliseconds since 1970-01-01T00:00:00Z.
///
/// Wall time is for display and for latest-wins tie-breaking only; causality is decided by version vectors.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since the Unix epoch (negative before it).
    public var millisecondsSince1970: Int64

    /// Creates a timestamp.
    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    /// Orders by time.
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    /// This timestamp moved by `milliseconds`.
    public func advanced(by milliseconds: Int64) -> Timestamp {
        Timestamp(millisecondsSince1970: millisecondsSince1970 + milliseconds)
    }

    /// ISO 8601 in UTC with milliseconds, such as `2026-01-01T00:00:00.000Z`.
    public var description: String {
        // Floor division with a non-negative remainder, in steps that cannot overflow (a decoded wall time can be
        // any Int64, Int64.min included).
        var seconds = millisecondsSince1970 / 1000
        var fraction = millisecondsSince1970 % 1000
        if fraction < 0 {
            seconds -= 1
            fraction += 1000
        }
        var days = seconds / 86400
        var secondOfDay = seconds % 86400
        if secondOfDay < 0 {
            days -= 1
            secondOfDay += 86400
        }
        let (year, month, day) = Timestamp.civilDate(daysSince1970: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(fraction, 3))Z"
    }

    // Howard Hinnant's days-to-civil algorithm: proleptic Gregorian, exact for every Int64 day in range.
    private static func civilDate(daysSince1970 days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
