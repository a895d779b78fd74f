extension ConflictReport {
    /// The report as one self-contained HTML page: inline CSS, the causal graphs as inline SVG, no scripts and
    /// nothing fetched. Every piece of text is escaped; failures and open conflicts are marked in red. The same
    /// report always gives the same bytes.
    public func html() -> String {
        var out = [
            "<!DOCTYPE html>", "<html lang=\"en\">", "<head>", "<meta charset=\"utf-8\">",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
            "<title>\(e(title))</title>", "<style>", Self.style, "</style>", "</head>", "<body>", "<header>",
            "<h1>\(e(title))</h1>",
        ]
        if let description, !description.isEmpty { out.append("<p class=\"description\">\(e(description))</p>") }
        var facts = [("Kind", e(kind.rawValue))]
        if let source { facts.append(("Source", "<code>\(e(source))</code>")) }
        if let seed { facts.append(("Seed", "\(seed)")) }
        if let strategy { facts.append(("Strategy", e(strategy))) }
        out.append("<dl class=\"facts\">" + facts.map { "<dt>\($0.0)</dt><dd>\($0.1)</dd>" }.joined() + "</dl>")
        if let outcome {
            let count = outcome.failures.count
            out.append(
                outcome.passed
                    ? "<p class=\"outcome passed\">\(outcomeSentence(passed: true))</p>"
                    : "<p class=\"outcome failed\">\(outcomeSentence(passed: false)): \(count) \(count == 1 ? "failure" : "failures")</p>"
            )
            if !outcome.failures.isEmpty {
                out.append(
                    "<ul class=\"failures\">"
                        + outcome.failures.map { failure in
                            let place = [failure.step.map { "step \($0)" }, failure.line.map { "line \($0)" }]
                                .compactMap { $0 }.joined(separator: ", ")
                            return "<li>" + (place.isEmpty ? "" : "<b>\(place)</b>: ") + e(failure.message) + "</li>"
                        }.joined() + "</ul>")
            }
        }
        let open = documents.reduce(0) { $0 + $1.conflicts.filter { $0.status == .open }.count }
        if open > 0 {
            out.append(
                "<p class=\"outcome failed\">\(open) open \(open == 1 ? "conflict awaits" : "conflicts await") a decision</p>"
            )
        }
        out.append("</header>")
        if !devices.isEmpty {
            out += [
                "<section id=\"devices\">", "<h2>Devices</h2>", "<table>",
                "<tr><th>Device</th><th>Identity</th><th>Clock skew</th></tr>",
            ]
            out += devices.map {
                "<tr><td>\(e($0.name))</td><td><code>\(e($0.id))</code></td><td>\(e($0.clockSkew ?? ""))</td></tr>"
            }
            out += ["</table>", "</section>"]
        }
        if !timeline.isEmpty {
            out += [
                "<section id=\"timeline\">", "<h2>Timeline</h2>", "<table>",
                "<tr><th>Step</th><th>Time</th><th>Action</th><th>Events</th></tr>",
            ]
            for entry in timeline {
                let step = "\(entry.step)" + (entry.line.map { " <span class=\"muted\">line \($0)</span>" } ?? "")
                var events = entry.events.map { "<li>\(e($0))</li>" }
                if let failure = entry.failure { events.append("<li class=\"failure\">✗ \(e(failure))</li>") }
                out.append(
                    "<tr\(entry.failure == nil ? "" : " class=\"failed\"")><td>\(step)</td><td>\(e(entry.time))</td><td><code>\(e(entry.action))</code></td><td><ul>\(events.joined())</ul></td></tr>"
                )
            }
            out += ["</table>", "</section>"]
        }
        for (index, document) in documents.enumerated() { out += html(document, index: index + 1) }
        out += ["</body>", "</html>"]
        return out.joined(separator: "\n") + "\n"
    }

    private func html(_ document: DocumentReport, index: Int) -> [String] {
        var out = [
            "<section class=\"document\" id=\"document-\(index)\">", "<h2>Document \(e(document.name))</h2>",
            "<p class=\"muted\"><code>\(e(document.id))</code> · <code>\(e(document.type))</code></p>",
            "<h3>Conflicts</h3>",
        ]
        if document.conflicts.isEmpty { out.append("<p>No conflicts.</p>") }
        for conflict in document.conflicts { out += Self.html(conflict) }
        out.append("<h3>Loss ledger</h3>")
        if document.losses.isEmpty { out.append("<p>Nothing was discarded.</p>") }
        for loss in document.losses {
            out.append(
                "<div class=\"loss\"><p><code>\(e(loss.resolution))</code> \(e(loss.strategy)) by \(e(loss.resolvedBy)) at \(e(loss.time)): "
                    + (loss.discarded.isEmpty ? "nothing discarded." : "discarded:") + "</p>")
            for version in loss.discarded {
                out.append(
                    "<p class=\"muted\"><code>\(e(version.head))</code> by \(e(version.device)) at \(e(version.time))</p>"
                        + Self.pre(version.contents))
            }
            out.append("</div>")
        }
        out += ["<h3>Final state per device</h3>", "<div class=\"states\">"]
        for state in document.devices {
            let flags = state.state.map { "<span class=\"flag flag-\(e($0))\">\(e($0))</span>" }.joined(separator: " ")
            var lines = [
                "<div class=\"state\(state.exists ? "" : " gone")\">", "<h4>\(e(state.device))</h4>",
                "<p>\(state.exists ? "exists" : "<b>does not exist</b>") \(flags)</p>",
            ]
            if state.name != document.name && !state.name.isEmpty {
                lines.append("<p>named <code>\(e(state.name))</code></p>")
            }
            lines.append(
                "<p class=\"muted\">vector \(Self.vector(state.vector)) · heads "
                    + (state.heads.isEmpty
                        ? "none" : state.heads.map { "<code>\(e($0))</code>" }.joined(separator: " ")) + "</p>")
            if state.showsContents || !state.contents.isEmpty { lines.append(Self.pre(state.contents)) }
            if let authorship = state.authorship, !authorship.isEmpty { lines.append(Self.authorship(authorship)) }
            out += lines + ["</div>"]
        }
        out += ["</div>", "<h3>Causal graph</h3>"]
        if document.graph.isEmpty {
            out.append("<p>No changes.</p>")
        } else {
            out += [
                "<p class=\"legend muted\">One lane per device, one row per change (topological order), each joined to its parents: "
                    + "<span class=\"key key-lifecycle\">lifecycle</span> <span class=\"key key-resolution\">resolution</span> "
                    + "<span class=\"key key-discarded\">discarded</span> <span class=\"key key-open\">head of an open conflict</span></p>",
                "<div class=\"picture\">", CausalGraphPicture(document: document, devices: devices).svg(), "</div>",
            ]
        }
        out.append("</section>")
        return out
    }

    private static func html(_ conflict: ConflictEntry) -> [String] {
        let open = conflict.status == .open
        var out = [
            "<article class=\"conflict \(open ? "open" : "resolved")\">",
            "<h4>Conflict <code>\(e(conflict.id))</code> <span class=\"badge\">\(open ? "open" : "resolved")</span>"
                + (conflict.strategy.map { " <span class=\"strategy\">\(e($0))</span>" } ?? "") + "</h4>",
            "<p class=\"muted\">seen by \(conflict.seenBy.map(e).joined(separator: ", ")) · common ancestor "
                + (conflict.ancestorHead.map { "<code>\(e($0))</code>" } ?? "none") + "</p>",
        ]
        for (index, version) in conflict.versions.enumerated() {
            out.append(
                "<div class=\"version\"><p><b>Version \(index + 1)</b>\(version.isCurrent ? " (current)" : "") by \(e(version.device)) at \(e(version.time)) · head <code>\(e(version.head))</code> · vector \(vector(version.vector))</p>"
            )
            if version.changes.isEmpty {
                out.append("<p class=\"muted\">No differences from the common ancestor.</p>")
            } else {
                out.append(
                    "<table class=\"diff\"><tr><th>Where</th><th>Ancestor</th><th>This version</th></tr>"
                        + version.changes.map { change in
                            "<tr class=\"\(e(change.kind))\"><td>\(e(change.kind)) \(e(change.location))</td>"
                                + "<td><pre class=\"base\">\(change.base.map(e).joined(separator: "\n"))</pre></td>"
                                + "<td><pre class=\"version\">\(change.version.map(e).joined(separator: "\n"))</pre></td></tr>"
                        }.joined() + "</table>")
            }
            out.append("</div>")
        }
        if let resolution = conflict.resolution {
            let kept =
                resolution.chosen.isEmpty
                ? "new contents" : resolution.chosen.map { "<code>\(e($0))</code>" }.joined(separator: " ")
            let dropped =
                resolution.discarded.isEmpty
                ? "nothing" : resolution.discarded.map { "<code>\(e($0))</code>" }.joined(separator: " ")
            out.append(
                "<p class=\"resolution\">Resolved by \(e(resolution.resolvedBy)) at \(e(resolution.time)) with \(e(resolution.strategy))\(resolution.characterLevel == true ? ", character by character" : "") (<code>\(e(resolution.head))</code>): kept \(kept), discarded \(dropped).</p>"
            )
        }
        out.append("</article>")
        return out
    }

    /// Who typed each stretch of a device's text: a table of the stretches in the text's order (line breaks shown
    /// as `↵`).
    private static func authorship(_ stretches: [AuthoredStretch]) -> String {
        var rows = "<table class=\"authorship\"><tr><th>Text</th><th>Typed by</th></tr>"
        for stretch in stretches {
            let change = stretch.change.map { "<code>" + e($0) + "</code>" } ?? "(before the history)"
            rows += "<tr><td><code>" + e(stretch.text.shownOnOneLine) + "</code></td><td>" + change + "</td></tr>"
        }
        return rows + "</table>"
    }

    private static func pre(_ lines: [String]) -> String {
        lines.isEmpty
            ? "<pre class=\"contents empty\">(empty)</pre>"
            : "<pre class=\"contents\">\(lines.map(e).joined(separator: "\n"))</pre>"
    }

    private static func vector(_ entries: [VectorEntry]) -> String {
        entries.isEmpty ? "empty" : entries.map { "\(e($0.device)) \($0.seq)" }.joined(separator: ", ")
    }

    private func e(_ text: String) -> String { HTMLText.escape(text) }
    private static func e(_ text: String) -> String { HTMLText.escape(text) }

    private static let style = """
        body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1d1d1f; margin: 0 auto; max-width: 1100px; padding: 16px 24px; }
        h1 { font-size: 24px; margin: 8px 0; } h2 { border-bottom: 1px solid #ddd; padding-bottom: 4px; margin-top: 32px; }
        h3 { margin-top: 24px; } h4 { margin: 8px 0; }
        code, pre { font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; }
        pre { background: #f6f8fa; border: 1px solid #e1e4e8; border-radius: 4px; padding: 6px 8px; margin: 4px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
        table { border-collapse: collapse; margin: 8px 0; } th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }
        th { background: #f3f3f3; } td ul { margin: 0; padding-left: 16px; }
        .muted { color: #666; } .description { font-style: italic; }
        .facts { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; } .facts dt { font-weight: 600; } .facts dd { margin: 0; }
        .outcome { display: inline-block; padding: 4px 10px; border-radius: 4px; font-weight: 600; margin-right: 8px; }
        .outcome.passed { background: #e6f4ea; color: #137333; } .outcome.failed { background: #fce8e6; color: #a50e0e; }
        .failures li, .failure { color: #a50e0e; } tr.failed td { background: #fce8e6; }
        .conflict { border: 1px solid #ddd; border-left: 6px solid #9aa0a6; border-radius: 4px; padding: 4px 12px; margin: 12px 0; }
        .conflict.open { border-left-color: #d93025; background: #fffafa; } .conflict.resolved { border-left-color: #1e8e3e; }
        .badge { font-size: 11px; text-transform: uppercase; padding: 1px 6px; border-radius: 8px; background: #e6f4ea; color: #137333; }
        .conflict.open .badge { background: #d93025; color: #fff; } .strategy { font-size: 12px; color: #555; }
        .diff pre { background: none; border: none; padding: 0; } .diff pre.base { color: #a50e0e; } .diff pre.version { color: #137333; }
        .resolution { font-weight: 600; }
        .states { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 12px; }
        .state { border: 1px solid #ddd; border-radius: 4px; padding: 4px 12px; } .state.gone { opacity: 0.7; border-style: dashed; }
        .flag { font-size: 11px; padding: 1px 6px; border-radius: 8px; background: #eee; } .flag-inConflict, .flag-savingError { background: #d93025; color: #fff; }
        .picture { overflow-x: auto; border: 1px solid #eee; border-radius: 4px; }
        .key { display: inline-block; padding: 0 8px; border-radius: 10px; border: 2px solid #5f6368; color: #1d1d1f; }
        .key-lifecycle { background: #e8f0fe; border-color: #1a73e8; } .key-resolution { background: #fbbc04; border-color: #b06000; }
        .key-discarded { border-style: dashed; } .key-open { border-color: #d93025; border-width: 3px; }
        """
}
