import FolioCore
import FolioDocuments
import FolioReports

extension ScenarioRun {
    /// The run's conflict-inspection report: the timeline, every device's view of every document (conflicts open
    /// and settled, losses, final state, causal graph), and the outcome.
    func makeReport() async -> ConflictReport {
        var captures: [DocumentCapture] = []
        var problems: [String] = []
        var ids = Set<DocumentID>()
        for device in devices where device.isRunning && options.makesReport {
            if let held = try? device.runningLibrary().store.documents() { ids.formUnion(held) }
        }
        for device in devices {
            for id in ids.sorted() {
                do {
                    if let handle = device.handles[id] {
                        captures.append(try await handle.capture())
                    } else if let library = device.library, try await library.info(of: id) != nil {
                        await captures.append(try DocumentCapture.capture(logOf: id, in: library))
                    } else {
                        captures.append(.absent(id, on: device.device))
                    }
                } catch {
                    problems.append("\(device.name): \(error)")
                }
            }
        }
        let timeline = steps.map { step in
            TimelineEntry(
                step: step.number, line: step.line > 0 ? step.line : nil, time: step.time, action: step.action,
                events: step.events, failure: step.failure)
        }
        let outcome = ConflictReport.Outcome(
            passed: failures.isEmpty,
            failures: failures.map { failure in
                ConflictReport.Failure(
                    step: failure.step > 0 ? failure.step : nil, line: failure.line > 0 ? failure.line : nil,
                    message: "\(failure.kind.rawValue): \(failure.message)")
            } + problems.map { ConflictReport.Failure(message: "report: \($0)") })
        let reportDevices = devices.map { device in
            ReportDevice(
                name: device.name, id: device.device.id.description,
                clockSkew: device.skew == 0 ? nil : "\(SimulatedDuration(milliseconds: device.skew))")
        }
        return ConflictReport(
            title: scenario.name, description: scenario.description, kind: .scenario, seed: scenario.seed,
            strategy: scenario.strategy.rawValue, outcome: outcome, devices: reportDevices, timeline: timeline,
            documents: DocumentReport.assemble(captures, devices: devices.map(\.device)))
    }
}
