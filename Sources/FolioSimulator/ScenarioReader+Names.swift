import Foundation
import Yams

extension ScenarioReader {
    // MARK: Examples

    /// A device name for examples in messages: the scenario's first device, or `iPad`.
    var exampleDevice: String {
        YAMLText.scalar(deviceNames?.first ?? "iPad")
    }

    /// A second device name for examples: the scenario's second device, or `Mac`.
    var otherExampleDevice: String {
        guard let deviceNames, deviceNames.count > 1 else { return "Mac" }
        return YAMLText.scalar(deviceNames[1])
    }

    /// A document name for examples: the first document the steps create, or `Notes`.
    var exampleDocument: String {
        YAMLText.scalar(documentOrder.first ?? "Notes")
    }

    // MARK: Devices

    /// A device name that the scenario declares.
    mutating func readDevice(_ node: Node, _ what: String = "device", example: String) -> String? {
        guard let name = readName(node, what, example: example) else { return nil }
        checkDevice(name, at: node)
        return name
    }

    /// Reports `name` unless the scenario declares it (or its devices could not be read).
    mutating func checkDevice(_ name: String, at node: Node) {
        guard let deviceNames, !deviceNames.contains(name) else { return }
        if let nearest = NameSuggestion.nearest(to: name, among: deviceNames) {
            report(.unknownDevice, at: node, "unknown device '\(name)'; did you mean '\(nearest)'?")
        } else {
            let devices =
                deviceNames.count == 1
                ? "the only device is '\(deviceNames[0])'" : "the devices are \(NameSuggestion.list(deviceNames))"
            report(.unknownDevice, at: node, "unknown device '\(name)'; \(devices) (declare more under devices)")
        }
    }

    /// A non-empty list of declared devices, each named once.
    mutating func readDeviceList(_ node: Node, _ what: String, example: String) -> [String]? {
        guard let items = readList(node, what, example: example) else { return nil }
        guard !items.isEmpty else {
            report(.invalidValue, at: node, "\(what) names no device; write \(example)")
            return nil
        }
        var names: [String] = []
        for item in items {
            guard let name = readDevice(item, "a device in \(what)", example: example) else { continue }
            guard !names.contains(name) else {
                report(.duplicateName, at: item, "'\(name)' is named twice in \(what); name each device once")
                continue
            }
            names.append(name)
        }
        return names
    }

    // MARK: Documents

    /// A document name that an earlier step made known, with what is known of it (`nil` after reporting an unknown
    /// name).
    mutating func readDocument(_ node: Node, example: String) -> (name: String, known: KnownDocument?)? {
        guard let name = readName(node, "document", example: example) else { return nil }
        return (name, lookUpDocument(name, at: node))
    }

    /// What is known of the document `name`, or `nil` after reporting that no earlier step makes it known.
    ///
    /// A name is known once a `create` step creates it or a `rename` step renames a document to it. A keep-both
    /// resolution names its copies "NAME (conflict from DEVICE)", so such a name is known when NAME is and DEVICE is
    /// declared; it has NAME's model.
    mutating func lookUpDocument(_ name: String, at node: Node) -> KnownDocument? {
        if let known = documents[name] { return known }
        if let (base, device) = Self.splitConflictCopyName(name), let known = documents[base],
            deviceNames?.contains(device) ?? true
        {
            remember(name, model: known.model, line: node.mark?.line ?? 0)
            return documents[name]
        }
        if let nearest = NameSuggestion.nearest(to: name, among: documentOrder) {
            report(
                .unknownDocument, at: node,
                "no step before this one creates the document '\(name)'; did you mean '\(nearest)'?")
        } else {
            report(
                .unknownDocument, at: node,
                "no step before this one creates the document '\(name)'; create it first, such as "
                    + "- create: {device: \(exampleDevice), document: \(YAMLText.scalar(name))}")
        }
        return nil
    }

    /// Makes `name` known with `model`, unless it already is.
    mutating func remember(_ name: String, model: Scenario.Model?, line: Int) {
        guard documents[name] == nil else { return }
        documents[name] = KnownDocument(model: model, line: line)
        documentOrder.append(name)
    }

    /// `("Notes", "Mac")` for `"Notes (conflict from Mac)"`, the name keep-both gives a losing version.
    static func splitConflictCopyName(_ name: String) -> (base: String, device: String)? {
        let marker = " (conflict from "
        guard name.hasSuffix(")"), let range = name.range(of: marker, options: .backwards) else { return nil }
        let device = name[range.upperBound..<name.index(before: name.endIndex)]
        let base = name[..<range.lowerBound]
        guard !base.isEmpty, !device.isEmpty else { return nil }
        return (String(base), String(device))
    }
}
