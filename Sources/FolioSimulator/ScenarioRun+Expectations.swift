import FolioCore
import FolioDocuments

extension ScenarioRun {
    /// Checks an `expect` step; returns one message per assertion that did not hold, saying what was expected and
    /// what was found.
    func check(_ expectation: Scenario.Expectation) async throws(SimulationError) -> [String] {
        var messages: [String] = []
        if let document = expectation.document {
            let names = expectation.device.map { [$0] } ?? devices.map(\.name)
            for name in names {
                messages += try await check(expectation, document: document, on: device(name))
            }
        }
        if let converged = expectation.converged {
            let found = try await convergenceProblem()
            if converged, let found { messages.append("expected converged: true, found \(found)") }
            if !converged, found == nil {
                messages.append("expected converged: false, found every connected device holding the same")
            }
        }
        if let expected = expectation.lostChanges {
            let lost = try lostChanges()
            if lost.count != expected {
                messages.append(
                    "expected lostChanges: \(expected), found \(lost.count)" + (lost.first.map { " (\($0))" } ?? ""))
            }
        }
        return messages
    }

    private func check(_ expectation: Scenario.Expectation, document name: String, on device: SimulatedDevice)
        async throws(SimulationError) -> [String]
    {
        guard device.isRunning else {
            return ["\(device.name) is not running (it crashed; restart it before expecting)"]
        }
        let observation: DocumentObservation?
        do {
            let id = try documentID(name, on: device)
            observation = try await device.observe(id)
        } catch {
            observation = nil
        }
        let exists = observation.map { !$0.isDeleted } ?? false
        var messages: [String] = []
        func mismatch(_ key: String, _ expected: String, _ found: String) {
            messages.append("\(device.name): expected \(name) \(key): \(expected), found \(found)")
        }
        if let expected = expectation.exists, expected != exists {
            mismatch(
                "exists", "\(expected)",
                observation == nil ? "no such document" : exists ? "it exists" : "it is deleted")
        }
        let contentKeys = [
            expectation.state != nil, expectation.conflictVersions != nil, expectation.text != nil,
            expectation.contains != nil, expectation.records != nil, expectation.images != nil,
            expectation.versions != nil, expectation.namedVersions != nil, expectation.losses != nil,
        ]
        guard contentKeys.contains(true) else { return messages }
        guard let observation else {
            messages.append("\(device.name): expected \(name) to be there, found no such document")
            return messages
        }
        if let expected = expectation.state {
            let found = Self.expectedState(of: observation.state)
            if found != expected { mismatch("state", "\(expected)", "\(found)") }
        }
        if let expected = expectation.conflictVersions, expected != observation.conflictVersions {
            mismatch("conflictVersions", "\(expected)", "\(observation.conflictVersions)")
        }
        // Exact and by Unicode scalars, as positions count and as the file holds the text: not up to normalization.
        if let expected = expectation.text, !(observation.text?.equalsByScalars(expected) ?? false) {
            mismatch("text", expected.debugDescription, Self.describe(observation.text, against: expected, whole: true))
        }
        if let expected = expectation.contains, !(observation.text?.containsByScalars(expected) ?? false) {
            mismatch(
                "contains", expected.debugDescription, Self.describe(observation.text, against: expected, whole: false))
        }
        if let expected = expectation.records {
            let records = observation.records ?? [:]
            for id in expected.keys.sorted() {
                guard let fields = records[id] else {
                    mismatch(
                        "records", "a record \(id)", "none (records: \(records.keys.sorted().joined(separator: ", ")))")
                    continue
                }
                for field in expected[id]!.keys.sorted() where fields[field] != expected[id]![field] {
                    mismatch(
                        "records", "\(id).\(field) = \(expected[id]![field]!.debugDescription)",
                        fields[field].map { $0.debugDescription } ?? "no such field")
                }
            }
        }
        if let expected = expectation.images, expected != observation.images {
            func list(_ names: Set<String>?) -> String { "[" + (names ?? []).sorted().joined(separator: ", ") + "]" }
            mismatch("images", list(expected), list(observation.images))
        }
        if expectation.versions != nil || expectation.namedVersions != nil || expectation.losses != nil {
            let history: [HistoryVersion]
            let losses: Int
            do {
                let handle = try await device.handle(try documentID(name, on: device))
                history = try await handle.history()
                losses = try await handle.lossCount()
            } catch {
                messages.append("\(device.name): cannot read the history of \(name): \(Self.translate(error))")
                return messages
            }
            if let expected = expectation.versions, expected != history.count {
                mismatch(
                    "versions", "\(expected)",
                    "\(history.count) (\(history.map(\.occasion.rawValue).joined(separator: ", ")))")
            }
            let names = history.compactMap(\.name)
            if let expected = expectation.namedVersions, expected != names {
                func list(_ names: [String]) -> String { "[" + names.joined(separator: ", ") + "]" }
                mismatch("namedVersions", list(expected), list(names))
            }
            if let expected = expectation.losses, expected != losses {
                mismatch("losses", "\(expected)", "\(losses)")
            }
        }
        return messages
    }

    /// The state word an `expect` step compares: a conflict or a failed save first, then closed, else normal.
    static func expectedState(of state: DocumentState) -> Scenario.ExpectedState {
        if state.contains(.inConflict) { return .inConflict }
        if state.contains(.savingError) { return .savingError }
        if state.contains(.closed) { return .closed }
        return .normal
    }

    /// The text found, for a `text` (`whole`) or `contains` mismatch; with its scalars when it would match up to
    /// Unicode normalization or grapheme boundaries, since then both print alike.
    static func describe(_ found: String?, against expected: String, whole: Bool) -> String {
        guard let found else { return "no text" }
        let alike = whole ? found == expected : found.contains(expected)
        guard alike else { return found.debugDescription }
        return
            "\(found.debugDescription) (other Unicode scalars: \(found.scalarCodes); expected \(expected.scalarCodes))"
    }

    /// Why the devices that are running, online and in one group do not hold the same changes and contents, or
    /// `nil` when they do.
    func convergenceProblem() async throws(SimulationError) -> String? {
        let connected = devices.filter { $0.isRunning && $0.isOnline }
        let groups = Dictionary(grouping: connected, by: { cloud.group(of: $0.name) })
        for key in groups.keys.sorted() {
            let group = groups[key]!
            if let difference = try difference(among: group) { return difference }
            if let difference = try await contentDifference(among: group) { return difference }
        }
        return nil
    }
}
