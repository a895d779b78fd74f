/// Shrinks a failing scenario to a small one that still fails: fewer steps (removed in ever smaller chunks, as
/// delta debugging does), then a perfect network, clocks without skew and no unused device.
///
/// Every candidate is a valid scenario (it reads back from its own YAML), so what comes out can be written to a
/// file that `folio replay` reproduces.
public struct ScenarioShrinker: Sendable {
    /// How many candidate runs the shrinker may spend.
    public var maximumRuns: Int

    /// Creates a shrinker.
    public init(maximumRuns: Int = 400) {
        self.maximumRuns = maximumRuns
    }

    /// The smallest scenario found for which `stillFails` holds; `scenario` itself (for which it must hold) when
    /// nothing smaller does. The last `keeping` steps stay as they are (a final check, say).
    public func shrink(_ scenario: Scenario, keeping: Int = 0, stillFails: (Scenario) async -> Bool) async -> Scenario {
        var current = scenario
        var runs = 0
        func attempt(_ candidate: Scenario) async -> Bool {
            guard runs < maximumRuns, candidate != current, Self.isValid(candidate) else { return false }
            runs += 1
            return await stillFails(candidate)
        }
        var chunk = max(current.steps.count / 2, 1)
        while runs < maximumRuns {
            var index = 0
            var removedAny = false
            while index < current.steps.count - keeping && runs < maximumRuns {
                var candidate = current
                candidate.steps.removeSubrange(index..<min(index + chunk, current.steps.count - keeping))
                if candidate.steps.count > keeping, await attempt(candidate) {
                    current = candidate
                    removedAny = true
                } else {
                    index += chunk
                }
            }
            if !removedAny {
                if chunk == 1 { break }
                chunk = max(chunk / 2, 1)
            }
        }
        var simpler = current
        simpler.network = .perfect
        if await attempt(simpler) { current = simpler }
        for index in current.devices.indices where current.devices[index].clockSkew != .zero {
            var candidate = current
            candidate.devices[index].clockSkew = .zero
            if await attempt(candidate) { current = candidate }
        }
        for device in current.devices.map(\.name).reversed() where current.devices.count > 1 {
            var candidate = current
            candidate.devices.removeAll { $0.name == device }
            if await attempt(candidate) { current = candidate }
        }
        return current
    }

    /// Whether the scenario reads back from its YAML (no step names a document before it exists, no device is
    /// missing).
    static func isValid(_ scenario: Scenario) -> Bool {
        (try? ScenarioParser.parse(yaml: scenario.yaml, file: "shrunk.yaml")) != nil
    }
}
