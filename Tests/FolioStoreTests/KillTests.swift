import FolioChildProcess
import FolioCore
import FolioStore
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs `folio log append` and kills it (SIGKILL) at random moments: every change it printed (it prints a change only
/// after the append that made it returned) must be in the store afterwards, and the store must be sound.
@Suite struct KillTests {
    let directory: TemporaryDirectory
    /// The document `folio log append` writes by default.
    let document = DocumentID(UUIDBytes("00000000-0000-4000-8000-000000000001")!)
    let observer = Device.named("Observer")

    init() throws {
        directory = try TemporaryDirectory()
    }

    private struct KilledRun {
        var lines: [String]
        var errors: String
        var killed: Bool
        var reason: String
    }

    /// Starts the tool, waits `delay` (after its first line when `afterFirstLine`), kills it and collects its output.
    private func runAndKill(
        _ folio: URL, store: URL, batch: Int, delay: Duration, afterFirstLine: Bool
    ) async throws -> KilledRun {
        let process = try ChildProcess.start(
            folio.path,
            arguments: [
                "log", "append", "--store", store.path, "--device", "killtest", "--count", "0", "--batch",
                String(batch),
            ],
            standardInput: .null, standardOutput: .pipe, standardError: .pipe)
        // A run cut short (the test's time limit cancels it) does not leave the tool appending.
        defer { if process.isRunning { process.send(SIGKILL) } }
        // Kept until the collectors read to the end (they close the descriptors when deallocated).
        let output = FileHandle(fileDescriptor: process.standardOutput!, closeOnDealloc: true)
        let errors = FileHandle(fileDescriptor: process.standardError!, closeOnDealloc: true)
        let lines = StreamCollector(reading: output)
        let messages = StreamCollector(reading: errors)

        if afterFirstLine {
            _ = try await StreamCollector.wait(timeout: .seconds(20)) {
                !lines.completeLines.isEmpty || !process.isRunning
            }
        }
        try await Task.sleep(for: delay)
        let wasRunning = process.isRunning
        if wasRunning { process.send(SIGKILL) }
        _ = try await StreamCollector.wait(timeout: .seconds(20)) { !process.isRunning }
        let termination = process.wait()
        let drained = try await StreamCollector.wait(timeout: .seconds(10)) { lines.ended && messages.ended }
        let killed = wasRunning && termination == .signaled(SIGKILL)
        withExtendedLifetime((output, errors)) {}
        return KilledRun(
            lines: lines.completeLines, errors: messages.text, killed: killed,
            reason: "terminated by \(termination)" + (drained ? "" : ", output not drained"))
    }

    // Fifty runs take about 2.5 minutes beside the rest of the suite on two cores.
    @Test(.timeLimit(.minutes(6)))
    func everyPrintedChangeSurvivesSIGKILL() async throws {
        let folio: URL
        switch FolioExecutable.locate() {
        case .success(let url): folio = url
        case .failure(let error):
            Issue.record("\(error)")
            return
        }
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        let runs = 50
        let runsPerStore = 2
        var killtest: DeviceID?
        var storeURL = directory.file("kill-0.sqlite")
        var known: UInt64 = 0  // the killtest device's last seq in the current store
        var printedTotal = 0
        var runsWithLines = 0
        let started = ContinuousClock.now

        for run in 0..<runs {
            if run % runsPerStore == 0 {
                storeURL = directory.file("kill-\(run / runsPerStore).sqlite")
                known = 0
            }
            let batch = generator.int(in: 1...20)
            let delay = generator.int(in: 20...300)
            let afterFirstLine = run % 2 == 1
            let context =
                "seed \(seed) run \(run) batch \(batch) delay \(delay) ms\(afterFirstLine ? " after the first line" : "")"

            let outcome = try await runAndKill(
                folio, store: storeURL, batch: batch, delay: .milliseconds(delay), afterFirstLine: afterFirstLine)
            #expect(
                outcome.killed, "\(context): the tool was not killed but \(outcome.reason); stderr: \(outcome.errors)")
            #expect(
                !afterFirstLine || !outcome.lines.isEmpty, "\(context): no line within 20 s; stderr: \(outcome.errors)")

            // Parse "DEVICEUUID SEQ" lines.
            var printed: [UInt64] = []
            for line in outcome.lines {
                let fields = line.split(separator: " ")
                guard fields.count == 2, let uuid = UUIDBytes(fields[0]), let seq = UInt64(fields[1]) else {
                    Issue.record("\(context): malformed line '\(line)'")
                    continue
                }
                let device = DeviceID(uuid)
                if let killtest {
                    #expect(device == killtest, "\(context): the device changed")
                } else {
                    killtest = device
                }
                printed.append(seq)
            }
            if !printed.isEmpty { runsWithLines += 1 }
            printedTotal += printed.count
            let continues = printed.elementsEqual((known + 1)..<(known + 1 + UInt64(printed.count)))
            #expect(continues, "\(context): printed seqs \(printed.prefix(3))… do not continue from \(known)")

            // Reopen in this process and check that everything printed is there.
            do {
                let store = try ChangeLogStore(at: storeURL, device: observer, clock: Fixtures.clock())
                defer { try? store.close() }
                let report = try store.verify()
                #expect(report.isSound, "\(context): \(report)")
                try store.checkInvariants()
                if killtest == nil {
                    killtest = try store.devices.all().first { $0.name == "killtest" }?.id
                }
                guard let device = killtest else {
                    #expect(try store.changeCount() == 0, "\(context): changes by an unknown device")
                    continue
                }
                let stored = try store.vector(of: document)[device]
                #expect(
                    stored >= printed.last ?? 0,
                    "\(context): printed up to \(printed.last ?? 0) but the log ends at \(stored)")
                #expect(stored >= known, "\(context): the log lost changes it had")
                let tail = try store.changes(of: document, since: VersionVector.of([(device, known)]))
                let contiguous = stored >= known && tail.map(\.id.seq).elementsEqual((known + 1)..<(stored + 1))
                #expect(contiguous, "\(context): the changes after \(known) are not \(known + 1)…\(stored)")
                let inLog = Set(tail.map(\.id.seq))
                let lost = printed.filter { !inLog.contains($0) }
                #expect(
                    lost.isEmpty, "\(context): \(lost.count) printed changes are missing, such as seq \(lost.prefix(3))"
                )
                #expect(tail.allSatisfy { $0.id.device == device && $0.document == document })
                if stored > 0 {
                    #expect(try store.devices.all().contains(Device(id: device, name: "killtest")), "\(context)")
                }
                known = stored
            } catch {
                Issue.record("\(context): after the kill: \(error)")
                break
            }
        }
        let elapsed = ContinuousClock.now - started
        print(
            "KillTests: seed \(seed), \(runs) runs, \(runsWithLines) printed changes, \(printedTotal) changes printed in all, \(elapsed)"
        )
        #expect(
            runsWithLines >= runs / 2,
            "seed \(seed): too few runs got as far as appending (\(runsWithLines) of \(runs))")
    }
}
