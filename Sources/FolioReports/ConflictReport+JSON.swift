import Foundation

extension ConflictReport {
    /// The report as JSON: keys sorted, indented, slashes unescaped, a newline at the end. The schema is
    /// documented in `docs/reports.md`; absent optional fields are left out.
    ///
    /// The same report always gives the same bytes: the value holds only strings, integers, booleans and arrays in
    /// a fixed order.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // Only strings, integers, booleans, arrays and objects: encoding cannot fail.
        let data = try! encoder.encode(self)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// Reads a report written by ``json()``.
    ///
    /// - Throws: ``ReportError`` `.invalidJSON` when the text is not such a report, `.newerSchema` when it was
    ///   written with a schema version this build does not know.
    public init(json: String) throws {
        let report: ConflictReport
        do {
            report = try JSONDecoder().decode(ConflictReport.self, from: Data(json.utf8))
        } catch {
            throw ReportError(.invalidJSON, "the text is not a conflict report in JSON", cause: error)
        }
        guard report.schemaVersion <= Self.currentSchemaVersion else {
            throw ReportError(
                .newerSchema,
                "the report has schema version \(report.schemaVersion); this build reads up to \(Self.currentSchemaVersion)"
            )
        }
        self = report
    }
}
