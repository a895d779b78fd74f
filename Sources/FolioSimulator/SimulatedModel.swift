import FolioCore
import FolioModels
import Foundation

/// A built-in model as the simulator drives it: scenario operations and initial contents turned into the model's
/// own, and what `expect` steps read back.
protocol SimulatedModel: MergeableDocumentModel {
    /// The scenario's name for the model.
    static var scenarioModel: Scenario.Model { get }
    /// The model's operation for a scenario operation of this model (the parser checked the model).
    static func operation(_ operation: Scenario.Operation, bytes: ImageBytes) -> Operation
    /// A document holding a `create` step's initial contents.
    static func initial(_ contents: Scenario.Contents, bytes: ImageBytes) throws -> Self
}

extension TextDocument: SimulatedModel {
    static var scenarioModel: Scenario.Model { .text }

    static func operation(_ operation: Scenario.Operation, bytes: ImageBytes) -> Operation {
        operation.textOperation!
    }

    static func initial(_ contents: Scenario.Contents, bytes: ImageBytes) throws -> TextDocument {
        guard case .text(let text) = contents else { throw ModelError(.invalidContents, "not a text") }
        return TextDocument(text: text)
    }
}

extension RecordsDocument: SimulatedModel {
    static var scenarioModel: Scenario.Model { .records }

    static func operation(_ operation: Scenario.Operation, bytes: ImageBytes) -> Operation {
        operation.recordsOperation!
    }

    static func initial(_ contents: Scenario.Contents, bytes: ImageBytes) throws -> RecordsDocument {
        guard case .records(let records) = contents else { throw ModelError(.invalidContents, "not records") }
        return try RecordsDocument(records: records)
    }
}

extension PagesDocument: SimulatedModel {
    static var scenarioModel: Scenario.Model { .pages }

    static func operation(_ operation: Scenario.Operation, bytes: ImageBytes) -> Operation {
        switch operation {
        case .insert(let position, let text): .insertText(at: position, text: text)
        case .delete(let position, let count): .deleteText(at: position, count: count)
        case .setText(let text): .setText(text)
        case .putImage(let name, let size): .putImage(name: name, bytes: bytes.next(name: name, size: size))
        case .removeImage(let name): .removeImage(name: name)
        default: preconditionFailure("\(operation.key) is not a pages operation")
        }
    }

    static func initial(_ contents: Scenario.Contents, bytes: ImageBytes) throws -> PagesDocument {
        guard case .pages(let text, let sizes) = contents else { throw ModelError(.invalidContents, "not pages") }
        var images: [String: Data] = [:]
        for name in sizes.keys.sorted(by: { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }) {
            images[name] = bytes.next(name: name, size: sizes[name]!)
        }
        return try PagesDocument(text: text, images: images)
    }
}

/// The bytes of images a scenario puts: derived from the seed, the image's name and a counter, so a scenario file
/// says only sizes and a run is reproduced by its seed.
final class ImageBytes: @unchecked Sendable {
    // Used by one simulation task at a time (the run is sequential).
    private let seed: UInt64
    private var counter: UInt64 = 0

    init(seed: UInt64) {
        self.seed = seed
    }

    /// `size` bytes for the image `name`; each call gives new bytes.
    func next(name: String, size: Int) -> Data {
        counter += 1
        let nameHash = ContentHash(hashing: Data(name.utf8)).bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        var generator = SplitMix64(seed: seed ^ nameHash &+ counter &* 0x9E37_79B9_7F4A_7C15)
        var data = Data(capacity: size)
        while data.count < size {
            var word = generator.next()
            withUnsafeBytes(of: &word) { data.append(contentsOf: $0.prefix(size - data.count)) }
        }
        return data
    }
}
