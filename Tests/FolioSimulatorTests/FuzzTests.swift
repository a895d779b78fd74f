import FolioCore
import FolioSimulator
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@Suite(.workPool) struct FuzzTests {
    @Test func theGeneratorIsDeterministicAndItsScenariosReadBack() throws {
        let generator = ScenarioGenerator(devices: 1...5, steps: 60)
        let base = TestSeed.make()
        for offset in 0..<100 as Range<UInt64> {
            let seed = base &+ offset
            let scenario = generator.scenario(seed: seed)
            #expect(scenario == generator.scenario(seed: seed), "seed \(seed)")
            #expect(scenario.steps.count == 60)
            let read = try ScenarioParser.parse(yaml: scenario.yaml, file: "seed-\(seed).yaml")
            #expect(read == scenario, "seed \(seed): the scenario does not read back from its YAML")
        }
    }

    /// Fuzzing reaches only what the generator writes: every action of the file format but `expect`, and the
    /// actions that touch files outside the pipeline do run (they are not all skipped as not applicable).
    @Test func theGeneratorWritesEveryActionAndFileStepsApply() async throws {
        let generator = ScenarioGenerator(devices: 2...4, steps: 80)
        let base = TestSeed.make()
        var written: Set<String> = []
        for offset in 0..<150 as Range<UInt64> {
            written.formUnion(generator.scenario(seed: base &+ offset).steps.map(\.action.key))
        }
        #expect(written == Set(Scenario.Action.keys).subtracting(["expect"]), "seeds from \(base)")

        let simulator = Fuzzer(generator: generator).simulator
        var applied: Set<String> = []
        for offset in 0..<40 as Range<UInt64> where !applied.isSuperset(of: ["writeFile", "import"]) {
            let result = await simulator.run(generator.scenario(seed: base &+ offset))
            #expect(result.violations.isEmpty, "seed \(base &+ offset): \(result.violations)")
            for (step, ran) in zip(result.scenario.steps, result.steps) where ran.skipped == nil {
                applied.insert(step.action.key)
            }
        }
        #expect(
            applied.isSuperset(of: ["writeFile", "import"]), "seeds from \(base): only \(applied.sorted()) applied")
    }

    /// A long scenario's steps are made as they run: the stream gives the whole scenario's steps, in order, and
    /// the setting without them.
    @Test func theStreamIsTheScenario() {
        let generator = ScenarioGenerator(devices: 1...5, steps: 60)
        let base = TestSeed.make()
        for offset in 0..<50 as Range<UInt64> {
            let seed = base &+ offset
            let whole = generator.scenario(seed: seed)
            var (setting, steps) = generator.stream(seed: seed)
            #expect(setting.steps.isEmpty)
            #expect(steps.underestimatedCount == 60)
            var streamed: [Scenario.Step] = []
            while let step = steps.next() { streamed.append(step) }
            #expect(streamed == whole.steps, "seed \(seed)")
            #expect(steps.next() == nil && steps.underestimatedCount == 0, "seed \(seed): a stream ends")
            setting.steps = streamed
            #expect(setting == whole, "seed \(seed)")
        }
    }

    /// A streamed run keeps no step but is the same run: the same failures, steps run and skipped; the counter
    /// counts every step.
    @Test func aStreamedRunIsTheWholeRun() async {
        let generator = ScenarioGenerator(devices: 2...4, steps: 40)
        let base = TestSeed.make()
        let counter = StepCounter()
        var fuzzing = Fuzzer(generator: generator).simulator
        fuzzing.stepCounter = counter
        var counted = 0
        for offset in 0..<6 as Range<UInt64> {
            let seed = base &+ offset
            let whole = await fuzzing.run(generator.scenario(seed: seed))
            let (setting, steps) = generator.stream(seed: seed)
            let streamed = await fuzzing.run(setting, streaming: steps)
            #expect(streamed.steps.isEmpty, "seed \(seed)")
            #expect(streamed.failures == whole.failures, "seed \(seed)")
            #expect(streamed.stepsRun == whole.steps.count && whole.stepsRun == whole.steps.count, "seed \(seed)")
            #expect(
                streamed.stepsSkipped == whole.steps.filter { $0.skipped != nil }.count
                    && whole.stepsSkipped == streamed.stepsSkipped, "seed \(seed)")
            counted += whole.stepsRun + streamed.stepsRun
        }
        #expect(counter.count == counted)
    }

    @Test func randomScenariosKeepTheInvariants() async {
        await expectInvariantsHold(ScenarioGenerator(devices: 2...4, steps: 40), seeds: 8, base: TestSeed.make())
    }

    /// Longer histories with more devices reach interleavings that 40 steps rarely do (`JoinedHeadTests` holds two
    /// bugs found with 5 devices; 3 devices and 50 steps had not shown them in tens of thousands of seeds).
    @Test func longScenariosWithManyDevicesKeepTheInvariants() async {
        await expectInvariantsHold(ScenarioGenerator(devices: 4...5, steps: 150), seeds: 3, base: TestSeed.make())
    }

    /// Runs `seeds` scenarios of `generator` from `base` on; each violation is reported with its seed and shrunk YAML.
    private func expectInvariantsHold(_ generator: ScenarioGenerator, seeds: UInt64, base: UInt64) async {
        let fuzzer = Fuzzer(generator: generator)
        for offset in 0..<seeds {
            let outcome = await fuzzer.run(seed: base &+ offset)
            #expect(
                outcome.violations.isEmpty,
                """
                seed \(outcome.seed): \(outcome.violations.map(\.description).joined(separator: "; "))
                \(outcome.shrunk?.yaml ?? "")
                """)
        }
    }

    @Test func theShrinkerKeepsWhatMakesItFail() async throws {
        // A stand-in failure: any scenario whose steps include iPad appending "boom" fails.
        let scenario = try ScenarioParser.parse(
            yaml: """
                name: Big
                devices: [{name: iPad}, {name: Mac, clockSkew: 5s}, {name: Phone}]
                network: {latency: 100ms, loss: 0.1}
                steps:
                  - create: {device: Mac, document: Notes}
                  - sync: all
                  - edit: {device: Mac, document: Notes, append: "a"}
                  - wait: 1s
                  - edit: {device: iPad, document: Notes, append: "boom"}
                  - sync: all
                  - edit: {device: Phone, document: Notes, append: "c"}
                """, file: "big.yaml")
        func fails(_ candidate: Scenario) -> Bool {
            candidate.steps.contains {
                $0.action == .edit(device: "iPad", document: "Notes", operation: .append("boom"))
            }
        }
        let shrunk = await ScenarioShrinker().shrink(scenario) { fails($0) }
        #expect(fails(shrunk))
        #expect(shrunk.steps.map(\.action.key) == ["create", "edit"], "\(shrunk.yaml)")
        #expect(shrunk.network == .perfect)
        #expect(shrunk.devices.map(\.name) == ["iPad", "Mac"])
        #expect(shrunk.devices.allSatisfy { $0.clockSkew == .zero })
        #expect(try ScenarioParser.parse(yaml: shrunk.yaml, file: "shrunk.yaml") == shrunk)
    }
}
