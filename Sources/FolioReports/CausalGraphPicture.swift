/// The causal graph of one document as an inline SVG: one lane per device, one row per change in topological
/// order, each change a circle labelled with its sequence number and joined to its parents.
///
/// Resolutions are filled, heads of an open conflict ringed in red, discarded heads dashed. Coordinates are whole
/// numbers, so the picture's text is the same on every run.
struct CausalGraphPicture {
    let document: DocumentReport
    /// The lanes, left to right: the report's devices that made a change, then any other author by name.
    let lanes: [String]

    private let laneWidth = 96
    private let rowHeight = 32
    private let top = 48
    private let left = 16
    private let radius = 11

    init(document: DocumentReport, devices: [ReportDevice]) {
        self.document = document
        let authors = document.graph.map(\.device)
        var lanes = devices.map(\.name).filter { authors.contains($0) }
        var others: [String] = []
        for author in authors where !lanes.contains(author) && !others.contains(author) { others.append(author) }
        lanes += others.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
        self.lanes = lanes
    }

    /// The `<svg>` element.
    func svg() -> String {
        let openHeads = Set(document.conflicts.filter { $0.status == .open }.flatMap { $0.versions.flatMap(\.heads) })
        let discarded = Set(document.losses.flatMap { $0.discarded.map(\.head) })
        let labelX = left + lanes.count * laneWidth + 12
        let width = labelX + 460
        let height = top + document.graph.count * rowHeight + 12
        let row = Dictionary(document.graph.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        let lane = Dictionary(lanes.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        func x(_ device: String) -> Int { left + (lane[device] ?? 0) * laneWidth + laneWidth / 2 }
        func y(_ index: Int) -> Int { top + index * rowHeight + rowHeight / 2 }
        let title = HTMLText.escape("Causal graph of \(document.name)")

        var out = [
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"graph\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"\(title)\">"
        ]
        out += ["<title>\(title)</title>", "<style>", Self.style, "</style>"]
        for (index, name) in lanes.enumerated() {
            let center = left + index * laneWidth + laneWidth / 2
            out.append(
                "<line class=\"lane\" x1=\"\(center)\" y1=\"\(top - 8)\" x2=\"\(center)\" y2=\"\(height - 8)\"/>")
            out.append(
                "<text class=\"lane-name\" x=\"\(center)\" y=\"24\" text-anchor=\"middle\"><title>\(HTMLText.escape(name))</title>\(HTMLText.escape(Self.shortened(name)))</text>"
            )
        }
        for (index, node) in document.graph.enumerated() {
            for parent in node.parents {
                guard let parentRow = row[parent] else { continue }
                let target = document.graph[parentRow]
                out.append(
                    "<line class=\"edge\" x1=\"\(x(node.device))\" y1=\"\(y(index))\" x2=\"\(x(target.device))\" y2=\"\(y(parentRow))\"/>"
                )
            }
        }
        for (index, node) in document.graph.enumerated() {
            var classes = ["node"]
            if node.isResolution { classes.append("resolution") }
            if ["create", "rename", "move", "delete", "restore"].contains(node.kind) { classes.append("lifecycle") }
            if openHeads.contains(node.hash) { classes.append("open-head") }
            if discarded.contains(node.hash) { classes.append("discarded") }
            let tip = "\(node.id) \(node.kind) at \(node.time), lamport \(node.lamport), \(node.hash)"
            out.append(
                "<g class=\"\(classes.joined(separator: " "))\"><title>\(HTMLText.escape(tip))</title>"
                    + "<circle cx=\"\(x(node.device))\" cy=\"\(y(index))\" r=\"\(radius)\"/>"
                    + "<text x=\"\(x(node.device))\" y=\"\(y(index) + 4)\" text-anchor=\"middle\">\(node.seq)</text></g>"
            )
            let label = "\(node.id) · \(node.kind) · \(node.time)"
            out.append("<text class=\"label\" x=\"\(labelX)\" y=\"\(y(index) + 4)\">\(HTMLText.escape(label))</text>")
        }
        out.append("</svg>")
        return out.joined(separator: "\n")
    }

    /// The picture's own style, so it reads the same inside the page or taken out of it.
    private static let style = """
        .graph text { font: 11px ui-monospace, Menlo, Consolas, monospace; fill: #1d1d1f; }
        .graph .lane { stroke: #e3e3e3; stroke-dasharray: 4 4; } .graph .edge { stroke: #8a8a8a; stroke-width: 1.5; }
        .graph .node circle { fill: #fff; stroke: #5f6368; stroke-width: 2; }
        .graph .node.lifecycle circle { fill: #e8f0fe; stroke: #1a73e8; }
        .graph .node.resolution circle { fill: #fbbc04; stroke: #b06000; }
        .graph .node.discarded circle { stroke-dasharray: 3 2; }
        .graph .node.open-head circle { stroke: #d93025; stroke-width: 4; }
        .graph .lane-name { font-weight: 600; } .graph .label { fill: #555; }
        """

    /// A lane header short enough for its lane; the full name is in its tooltip.
    private static func shortened(_ name: String) -> String {
        name.count <= 12 ? name : String(name.prefix(11)) + "…"
    }
}
