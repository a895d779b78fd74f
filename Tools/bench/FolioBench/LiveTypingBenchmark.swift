import Folio
import FolioCore
import FolioModels
import Foundation
import Synchronization

/// `live-typing [--editors N] [--seconds S] [--rate R] [--cursors 1]`: N devices, each a library of its own syncing live
/// (`startSyncing`) through a real `folio serve` on loopback (the release build named by `FOLIO_BENCH_FOLIO`), type
/// into one shared open document at R keystrokes a second each (8), for S seconds (10), each at the end of a line of
/// its own (its cursor), with the standard autosave policy (undo groups of 1 s; while syncing live, each edit committed as it is made) and the
/// `merge` conflict policy. Measured,
/// on one clock: the time from a keystroke to its showing in every other device's open document (each device watches
/// its document's `versionChanges`), whether every device ends with the same text holding every keystroke where and in
/// the order its editor typed it, the bytes
/// the server received and sent per keystroke, the bytes of a device's store per keystroke once it closed (its
/// history folded), and the resolutions the log holds (typing together should need none). With `--cursors 1`, each
/// editor also shows the others its cursor after every keystroke (`Document.setSelection`), and every device must end
/// showing every other editor's cursor at the end of its line (`cursors_ok`). `FOLIO_BENCH_SHOW_TEXT=1` prints the text
/// device 0 ends with.
enum LiveTypingBenchmark {
    struct Options {
        var editors = 2
        var seconds = 10.0
        var rate = 8.0
        /// Whether each editor shows the others its cursor after every keystroke (`--cursors 1`).
        var cursors = false

        init(_ arguments: [String]) throws {
            var index = 0
            while index < arguments.count {
                let flag = arguments[index]
                guard index + 1 < arguments.count, let number = Double(arguments[index + 1]), number > 0 else {
                    throw BenchError("live-typing: \(flag) needs a positive number")
                }
                switch flag {
                case "--editors": editors = Int(number)
                case "--seconds": seconds = number
                case "--rate": rate = number
                case "--cursors": cursors = number >= 1
                default: throw BenchError("live-typing: unknown argument \(flag)")
                }
                index += 2
            }
            guard (2...64).contains(editors) else { throw BenchError("live-typing: --editors must be within 2...64") }
        }
    }

    /// When each keystroke was typed and when each other device showed it, by editor, keystroke and device.
    final class Timeline: Sendable {
        private struct State {
            var typed: [[UInt64]]
            var shown: [[[UInt64]]]
            var seen: [[Int]]
        }
        private let state: Mutex<State>

        init(editors: Int, keystrokes: Int) {
            state = Mutex(
                State(
                    typed: Array(repeating: Array(repeating: 0, count: keystrokes), count: editors),
                    shown: Array(
                        repeating: Array(repeating: Array(repeating: 0, count: editors), count: keystrokes),
                        count: editors),
                    seen: Array(repeating: Array(repeating: 0, count: editors), count: editors)))
        }

        func typed(editor: Int, keystroke: Int, at time: UInt64) {
            state.withLock { $0.typed[editor][keystroke] = time }
        }

        /// Device `device` shows `counts[editor]` keystrokes of each editor at `time`.
        func shown(on device: Int, counts: [Int], at time: UInt64) {
            state.withLock { state in
                for (editor, count) in counts.enumerated() where editor != device {
                    let keystrokes = state.typed[editor].count
                    while state.seen[editor][device] < min(count, keystrokes) {
                        state.shown[editor][state.seen[editor][device]][device] = time
                        state.seen[editor][device] += 1
                    }
                }
            }
        }

        /// Every latency in milliseconds, and how many keystrokes some device never showed.
        func latencies() -> (milliseconds: [Double], unseen: Int) {
            state.withLock { state in
                var values: [Double] = []
                var unseen = 0
                for editor in state.typed.indices {
                    for keystroke in state.typed[editor].indices {
                        for device in state.typed.indices where device != editor {
                            let shown = state.shown[editor][keystroke][device]
                            if shown == 0 {
                                unseen += 1
                            } else {
                                values.append(Double(shown &- state.typed[editor][keystroke]) / 1e6)
                            }
                        }
                    }
                }
                return (values, unseen)
            }
        }
    }

    /// The line of each editor starts with its number and a colon; what follows is what it typed.
    static func counts(in text: String, editors: Int) -> [Int] {
        var counts = Array(repeating: 0, count: editors)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let colon = line.firstIndex(of: ":"), let editor = Int(line[..<colon]), editor < editors else {
                continue
            }
            counts[editor] = line.distance(from: line.index(after: colon), to: line.endIndex)
        }
        return counts
    }

    static func run() async throws {
        let options = try Options(Array(CommandLine.arguments.dropFirst(2)))
        let executable = try BenchServer.executable(for: "live-typing")
        let scratch = try ScratchDirectory("live-typing")
        defer { scratch.cleanUp() }
        let data = scratch.file("server")
        let token = try BenchServer.token(executable: executable, library: "live", data: data)
        let server = try BenchServer(executable: executable, data: data, log: scratch.file("server.log"))
        defer { server.stop() }
        let url = server.libraryURL("live")

        let editors = options.editors
        let showsCursors = options.cursors
        let keystrokes = Int(options.seconds * options.rate)
        let libraries = try (0..<editors).map { index in
            // What an app whose people write together chooses: concurrent edits merge, character by character.
            try DocumentLibrary(
                at: scratch.file("editor-\(index)"), deviceName: "editor \(index)",
                conflictPolicy: ConflictPolicy(default: .merge))
        }
        var syncs: [LibrarySync] = []
        for library in libraries { syncs.append(try await library.startSyncing(with: url, token: token)) }
        let start = (0..<editors).map { "\($0):\n" }.joined()
        let created = try await libraries[0].create(
            TextDocument.self, named: "Live", in: .shared, contents: TextDocument(text: start))
        var documents = [created]
        for library in libraries.dropFirst() {
            let deadline = ContinuousClock.now + .seconds(60)
            while try await library.info(of: created.id) == nil {
                guard ContinuousClock.now < deadline else { throw BenchError("the document did not reach a device") }
                try await Task.sleep(for: .milliseconds(10))
            }
            documents.append(try await library.open(created.id, as: TextDocument.self))
        }
        for document in documents {
            let deadline = ContinuousClock.now + .seconds(60)
            while await document.model.text != start {
                guard ContinuousClock.now < deadline else { throw BenchError("a device did not show the document") }
                try await Task.sleep(for: .milliseconds(10))
            }
        }

        let timeline = Timeline(editors: editors, keystrokes: keystrokes)
        let watchers = documents.enumerated().map { device, document in
            Task {
                for await _ in document.versionChanges {
                    let text = await document.model.text
                    timeline.shown(
                        on: device, counts: counts(in: text, editors: editors),
                        at: DispatchTime.now().uptimeNanoseconds)
                }
            }
        }
        let metricsBefore = try await server.metrics()
        let interval = UInt64(1e9 / options.rate)
        let began = DispatchTime.now().uptimeNanoseconds
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (editor, document) in documents.enumerated() {
                group.addTask {
                    // Editors start apart, as people do.
                    let offset = interval * UInt64(editor) / UInt64(editors)
                    for keystroke in 0..<keystrokes {
                        let due = began + offset + UInt64(keystroke) * interval
                        let now = DispatchTime.now().uptimeNanoseconds
                        if due > now { try await Task.sleep(nanoseconds: due - now) }
                        let letter = String(UnicodeScalar(UInt8(97 + (keystroke % 26))))
                        try await document.perform { document in
                            // The end of the editor's own line: its cursor, wherever the others' typing moved it.
                            let text = document.model.text
                            var position = 0
                            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false)
                                .enumerated()
                            {
                                position += line.unicodeScalars.count
                                if line.hasPrefix("\(editor):") { break }
                                if number == editors { break }
                                position += 1
                            }
                            timeline.typed(
                                editor: editor, keystroke: keystroke, at: DispatchTime.now().uptimeNanoseconds)
                            try document.edit(.insert(at: position, text: letter))
                            if showsCursors { try document.setSelection(TextSelection(cursor: position + 1)) }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        // Everything arrives: every device shows every keystroke, the same text.
        let deadline = ContinuousClock.now + .seconds(60)
        var texts: [String] = []
        repeat {
            try await Task.sleep(for: .milliseconds(50))
            texts = []
            for document in documents { texts.append(await document.model.text) }
        } while ContinuousClock.now < deadline
            && !(Set(texts).count == 1 && counts(in: texts[0], editors: editors).allSatisfy { $0 == keystrokes })
        if ProcessInfo.processInfo.environment["FOLIO_BENCH_SHOW_TEXT"] != nil {
            FileHandle.standardError.write(Data("device 0 shows:\n\(texts[0])\n".utf8))
        }
        // Each editor's keystrokes on its own line, in the order typed.
        let typedLine = String((0..<keystrokes).map { Character(UnicodeScalar(UInt8(97 + ($0 % 26)))) })
        let expected = (0..<editors).map { "\($0):\(typedLine)\n" }.joined()
        let textOK = Set(texts).count == 1 && texts[0] == expected
        // With cursors: every device shows every other editor's cursor at the end of that editor's line.
        var cursorsOK = true
        if options.cursors {
            let limit = ContinuousClock.now + .seconds(10)
            repeat {
                cursorsOK = true
                for (index, document) in documents.enumerated() {
                    let others = await document.others
                    let ends = lineEnds(in: await document.model.text, editors: editors)
                    let placed = others.compactMap { other in
                        libraries.firstIndex { $0.device.id == other.device }.map { (editor: $0, other.selection) }
                    }
                    cursorsOK =
                        cursorsOK && placed.count == editors - 1
                        && placed.allSatisfy { $0.editor != index && $0.1 == TextSelection(cursor: ends[$0.editor]) }
                }
                if !cursorsOK { try await Task.sleep(for: .milliseconds(50)) }
            } while !cursorsOK && ContinuousClock.now < limit
        }
        let metricsAfter = try await server.metrics()
        for watcher in watchers { watcher.cancel() }
        let (latencies, unseen) = timeline.latencies()
        let total = Double(editors * keystrokes)
        let wire =
            (metricsAfter["folio_bytes_in_total", default: 0] - metricsBefore["folio_bytes_in_total", default: 0]
                + metricsAfter["folio_bytes_out_total", default: 0]
                - metricsBefore["folio_bytes_out_total", default: 0]) / total
        let log = try libraries[0].store.changes(of: created.id)
        let resolutions = log.count { if case .resolution = $0.kind { true } else { false } }
        for sync in syncs { await sync.stop() }
        for document in documents { try await document.close() }
        let storeURL = scratch.file("editor-0").appendingPathComponent(".folio")
        for library in libraries { try library.store.close() }
        let storeBytes = directorySize(storeURL)

        let sorted = latencies.sorted()
        func quantile(_ q: Double) -> Double {
            sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]
        }
        printTable(
            "live-typing: \(editors) editors, \(options.rate) keystrokes/s each for \(options.seconds) s, through folio serve on loopback (\(machineDescription()))",
            [
                ("keystrokes", "\(Int(total))"),
                ("latency ms p50 (keystroke to every other screen)", format(quantile(0.5), 1)),
                ("latency ms p99", format(quantile(0.99), 1)),
                ("latency ms max", format(sorted.last ?? .nan, 1)),
                ("keystroke showings never seen", "\(unseen)"),
                ("every device the same text, every keystroke in place", "\(textOK)"),
                ("distinct texts at the end", "\(Set(texts).count)"),
                (
                    "keystrokes each editor's line holds on device 0",
                    counts(in: texts[0], editors: editors).map(String.init).joined(separator: " ")
                ),
                ("wire bytes per keystroke (server in + out)", format(wire, 1)),
                ("store bytes per keystroke (a device, closed)", format(Double(storeBytes) / total, 1)),
                ("changes in the log", "\(log.count)"),
                ("resolutions in the log", "\(resolutions)"),
                (
                    "cursors shown (every device, every other editor at its line's end)",
                    options.cursors ? "\(cursorsOK)" : "not shown"
                ),
            ])
        printJSON([
            "editors": editors, "keystrokes": Int(total), "latency_ms_p50": rounded(quantile(0.5), 10),
            "latency_ms_p99": rounded(quantile(0.99), 10), "text_ok": textOK, "unseen": unseen,
            "wire_bytes_per_keystroke": rounded(wire, 10),
            "store_bytes_per_keystroke": rounded(Double(storeBytes) / total, 10), "resolutions": resolutions,
            "changes": log.count, "cursors": options.cursors, "cursors_ok": options.cursors && cursorsOK,
        ])
    }

    static func rounded(_ value: Double, _ scale: Double) -> Double { (value * scale).rounded() / scale }

    /// Where each editor's line ends in `text` (before its line break), in scalars.
    static func lineEnds(in text: String, editors: Int) -> [Int] {
        var ends = Array(repeating: 0, count: editors)
        var position = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            position += line.unicodeScalars.count
            if let colon = line.firstIndex(of: ":"), let editor = Int(line[..<colon]), editor < editors {
                ends[editor] = position
            }
            position += 1
        }
        return ends
    }

    /// The bytes of the regular files under `url`.
    static func directorySize(_ url: URL) -> Int {
        guard let files = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.fileSizeKey]) else {
            return 0
        }
        var total = 0
        for case let file as URL in files {
            total += (try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
        }
        return total
    }
}
