import Foundation

/// What a scenario file probably meant by a duration it wrote in a way ``SimulatedDuration/init(parsing:)`` refuses,
/// so that the error can say exactly what to write instead.
enum DurationMisspelling: Equatable {
    /// A spelling of this duration: `90 s`, `5min`, `2 hours`, `1.5s` (which is `1500ms`).
    case duration(SimulatedDuration)
    /// A bare number, `30`: the unit is missing and cannot be guessed.
    case unitless(String)
    /// A spelling of a duration longer than ``SimulatedDuration/maximum``.
    case tooLong

    /// The unit names people write, each with its length in milliseconds.
    private static let unitNames: [String: Int64] = [
        "ms": 1, "msec": 1, "msecs": 1, "millisecond": 1, "milliseconds": 1,
        "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
        "m": 60_000, "min": 60_000, "mins": 60_000, "minute": 60_000, "minutes": 60_000,
        "h": 3_600_000, "hr": 3_600_000, "hrs": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    ]

    /// Reads `text` leniently: an optional sign, a decimal number (a fraction allowed), spaces, and a unit in any
    /// case and any common spelling. `nil` when it does not look like a duration at all, or when a fraction does not
    /// come to whole milliseconds (`0.0001s`).
    init?(_ text: String) {
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        let negative = body.first == "-"
        if negative || body.first == "+" { body = body.dropFirst() }
        let number = body.prefix { $0.isASCII && ($0.isWholeNumber || $0 == ".") }
        let unitName = body.dropFirst(number.count).trimmingCharacters(in: .whitespaces).lowercased()
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard number.contains(where: \.isWholeNumber), parts.count <= 2 else { return nil }
        if unitName.isEmpty {
            guard parts.count == 1 else { return nil }
            self = .unitless((negative ? "-" : "") + number)
            return
        }
        guard let unit = Self.unitNames[unitName] else { return nil }
        // Whole and fractional parts in milliseconds, exactly: `1.25s` is 1000 + 250.
        let fraction = parts.count == 2 ? parts[1] : ""
        guard fraction.count <= 18 else { return nil }
        // Too many digits for an Int64 is too long a duration.
        var (total, overflow) =
            Int64(parts[0].isEmpty ? "0" : parts[0])?.multipliedReportingOverflow(by: unit) ?? (0, true)
        if !fraction.isEmpty {
            let scale = fraction.reduce(Int64(1)) { scale, _ in scale * 10 }
            let (scaled, fractionOverflow) = Int64(fraction)!.multipliedReportingOverflow(by: unit)
            guard !fractionOverflow, scaled % scale == 0 else { return nil }
            if !overflow { (total, overflow) = total.addingReportingOverflow(scaled / scale) }
        }
        guard !overflow, total <= SimulatedDuration.maximum.milliseconds else {
            self = .tooLong
            return
        }
        self = .duration(SimulatedDuration(milliseconds: negative ? -total : total))
    }
}
