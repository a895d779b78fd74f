extension ConflictReport {
    /// The report as Markdown (CommonMark with GitHub tables): every name escaped, contents and diffs in fenced
    /// blocks, the causal graph as a table. Ends with a newline; the same report always gives the same text.
    public func markdown() -> String {
        var out: [String] = ["# " + MarkdownText.inline(title)]
        if let description, !description.isEmpty { out += ["", MarkdownText.inline(description)] }
        out += ["", "| | |", "|---|---|", "| Kind | \(kind.rawValue) |"]
        if let source { out.append("| Source | \(MarkdownText.code(source, inTable: true)) |") }
        if let seed { out.append("| Seed | \(seed) |") }
        if let strategy { out.append("| Strategy | \(MarkdownText.inline(strategy)) |") }
        if let outcome {
            let failures = outcome.failures.count
            let words = outcomeWords
            out.append(
                "| \(words.label) | "
                    + (outcome.passed
                        ? "**\(words.passed)**"
                        : "**\(words.failed.uppercased())** (\(failures) \(failures == 1 ? "failure" : "failures"))")
                    + " |")
        }
        if let outcome, !outcome.failures.isEmpty {
            out += ["", "## Failures", ""]
            out += outcome.failures.map {
                "- " + Self.place(step: $0.step, line: $0.line) + MarkdownText.inline($0.message)
            }
        }
        if !devices.isEmpty {
            out += ["", "## Devices", "", "| Device | Identity | Clock skew |", "|---|---|---|"]
            out += devices.map {
                "| \(MarkdownText.inline($0.name)) | `\($0.id)` | \($0.clockSkew.map { MarkdownText.inline($0) } ?? "") |"
            }
        }
        if !timeline.isEmpty {
            out += ["", "## Timeline", "", "| Step | Time | Action | Events |", "|---|---|---|---|"]
            for entry in timeline {
                let step = "\(entry.step)" + (entry.line.map { " (line \($0))" } ?? "")
                var events = entry.events.map { MarkdownText.inline($0) }
                if let failure = entry.failure { events.append("**✗ failed:** " + MarkdownText.inline(failure)) }
                out.append(
                    "| \(entry.failure == nil ? step : "**\(step) ✗**") | \(entry.time) | \(MarkdownText.code(entry.action, inTable: true)) | \(events.joined(separator: "<br>")) |"
                )
            }
        }
        for document in documents { out += Self.markdown(document) }
        return out.joined(separator: "\n") + "\n"
    }

    private static func place(step: Int?, line: Int?) -> String {
        switch (step, line) {
        case (let step?, let line?): "step \(step) (line \(line)): "
        case (let step?, nil): "step \(step): "
        case (nil, let line?): "line \(line): "
        case (nil, nil): ""
        }
    }

    private static func markdown(_ document: DocumentReport) -> [String] {
        var out = [
            "", "## Document " + MarkdownText.inline(document.name), "",
            "`\(document.id)` · \(MarkdownText.code(document.type))",
        ]
        out += ["", "### Conflicts", ""]
        if document.conflicts.isEmpty { out.append("No conflicts.") }
        for (index, conflict) in document.conflicts.enumerated() { out += (index > 0 ? [""] : []) + markdown(conflict) }
        out += ["", "### Loss ledger", ""]
        if document.losses.isEmpty { out.append("Nothing was discarded.") }
        for loss in document.losses {
            let count = loss.discarded.count
            let what = count == 0 ? "nothing discarded." : "discarded \(count) \(count == 1 ? "version" : "versions")."
            out.append(
                "- \(MarkdownText.code(loss.resolution)) \(MarkdownText.inline(loss.strategy)) by \(MarkdownText.inline(loss.resolvedBy)) at \(loss.time): \(what)"
            )
            for version in loss.discarded {
                out += [
                    "",
                    "  Discarded \(MarkdownText.code(version.head)) by \(MarkdownText.inline(version.device)) at \(version.time):",
                    "",
                ]
                out += contents(version.contents).split(separator: "\n", omittingEmptySubsequences: false).map {
                    "  " + $0
                }
            }
        }
        out += ["", "### Final state per device"]
        for state in document.devices {
            out += ["", "#### " + MarkdownText.inline(state.device), ""]
            var facts = [
                state.exists ? "exists" : "**does not exist**", "state " + state.state.joined(separator: ", "),
            ]
            if state.name != document.name && !state.name.isEmpty {
                facts.append("named " + MarkdownText.code(state.name))
            }
            facts.append("vector " + vector(state.vector))
            facts.append(
                "heads " + (state.heads.isEmpty ? "none" : state.heads.map { "`\($0)`" }.joined(separator: ", ")))
            out += [facts.joined(separator: " · "), ""]
            if state.showsContents || !state.contents.isEmpty { out.append(contents(state.contents)) }
            if let authorship = state.authorship, !authorship.isEmpty { out += [""] + self.authorship(authorship) }
        }
        out += ["", "### Causal graph", ""]
        if document.graph.isEmpty {
            out.append("No changes.")
        } else {
            out += ["| Change | Kind | Parents | Lamport | Time | Hash |", "|---|---|---|---|---|---|"]
            out += document.graph.map { node in
                "| \(MarkdownText.code(node.id, inTable: true)) | \(MarkdownText.inline(node.kind)) | "
                    + node.parents.map { MarkdownText.code($0, inTable: true) }.joined(separator: ", ")
                    + " | \(node.lamport) | \(node.time) | `\(node.hash)` |"
            }
        }
        return out
    }

    private static func markdown(_ conflict: ConflictEntry) -> [String] {
        let status = conflict.status == .open ? "**open**" : "resolved"
        var out = [
            "#### Conflict `\(conflict.id)`: \(status)"
                + (conflict.strategy.map { " (\(MarkdownText.inline($0)))" } ?? ""), "",
        ]
        var facts = ["Seen by " + conflict.seenBy.map(MarkdownText.inline).joined(separator: ", ")]
        facts.append("common ancestor " + (conflict.ancestorHead.map { "`\($0)`" } ?? "none"))
        out += [
            facts.joined(separator: " · ") + ".", "", "| Version | Device | Time | Vector | Head |",
            "|---|---|---|---|---|",
        ]
        for (index, version) in conflict.versions.enumerated() {
            out.append(
                "| \(index + 1)\(version.isCurrent ? " (current)" : "") | \(MarkdownText.inline(version.device)) | \(version.time) | \(vector(version.vector)) | `\(version.head)` |"
            )
        }
        for (index, version) in conflict.versions.enumerated() {
            out += [
                "",
                "Version \(index + 1) (\(MarkdownText.inline(version.device)), `\(version.head)`) against the common ancestor:",
                "",
            ]
            out.append(version.changes.isEmpty ? "No differences." : diff(version.changes))
        }
        if let resolution = conflict.resolution {
            let kept =
                resolution.chosen.isEmpty ? "new contents" : resolution.chosen.map { "`\($0)`" }.joined(separator: ", ")
            let dropped =
                resolution.discarded.isEmpty
                ? "nothing" : resolution.discarded.map { "`\($0)`" }.joined(separator: ", ")
            out += [
                "",
                "Resolved by \(MarkdownText.inline(resolution.resolvedBy)) at \(resolution.time) with \(MarkdownText.inline(resolution.strategy))\(resolution.characterLevel == true ? ", character by character" : "") (`\(resolution.head)`): kept \(kept), discarded \(dropped).",
            ]
        }
        return out
    }

    private static func diff(_ changes: [ChangeEntry]) -> String {
        var lines: [String] = []
        for change in changes {
            lines.append("@@ \(change.kind) \(change.location)")
            lines += change.base.map { "-" + $0 } + change.version.map { "+" + $0 }
        }
        return MarkdownText.block(lines, info: "diff")
    }

    /// Who typed each stretch of a device's text: a table of the stretches in the text's order (line breaks shown
    /// as `↵`).
    private static func authorship(_ stretches: [AuthoredStretch]) -> [String] {
        ["| Text | Typed by |", "|---|---|"]
            + stretches.map { stretch in
                "| \(MarkdownText.code(stretch.text, inTable: true)) | "
                    + (stretch.change.map { MarkdownText.code($0, inTable: true) } ?? "(before the history)") + " |"
            }
    }

    private static func contents(_ lines: [String]) -> String {
        MarkdownText.block(lines.isEmpty ? ["(empty)"] : lines)
    }

    private static func vector(_ entries: [VectorEntry]) -> String {
        entries.isEmpty
            ? "empty" : entries.map { "\(MarkdownText.inline($0.device)) \($0.seq)" }.joined(separator: ", ")
    }
}
