import Foundation

/// The encoding given to models and operations that are `Codable` and write no codec of their own: JSON with sorted
/// keys, so that one state gives the same bytes wherever the same Foundation encodes it (the bytes travel in
/// changes as they were written; no device re-encodes another's).
///
/// A `Set`, or a dictionary whose keys are neither strings nor integers, encodes in its iteration order, which can
/// differ between two equal values: hold such values as sorted arrays in a model that relies on this encoding. A
/// model's `encode(to:)` must not throw.
enum CodableModelCoding {
    /// The most bytes one operation's encoding may take.
    static let operationByteLimit = 1 << 26

    static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        do {
            return try encoder.encode(value)
        } catch {
            // JSONEncoder fails only on a value whose `encode(to:)` throws or encodes nothing: the model's own code.
            preconditionFailure("\(type(of: value)) cannot be encoded: \(error)")
        }
    }

    static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return try decoder.decode(type, from: data)
    }
}

extension DocumentModel where Self: Codable {
    /// Loads a snapshot taken by ``contents()``: the model's `Codable` form, as JSON.
    ///
    /// - Throws: ``ModelError`` `invalidContents` for a package, or bytes that do not decode as this model.
    public init(contents: DocumentContents) throws {
        guard case .data(let data) = contents else {
            throw ModelError(.invalidContents, "a \(Self.self) document is a flat file, not a package")
        }
        do {
            self = try CodableModelCoding.decode(Self.self, from: data)
        } catch {
            throw ModelError(.invalidContents, "the contents are not a \(Self.self)", cause: error)
        }
    }

    /// The model's `Codable` form, as JSON with sorted keys: the same bytes for the same state on every device.
    public func contents() -> DocumentContents {
        .data(CodableModelCoding.encode(self))
    }
}

extension DocumentOperation where Self: Codable {
    /// Appends the operation's `Codable` form, as length-prefixed JSON with sorted keys.
    public func encode(into writer: inout BinaryWriter) {
        writer.write(lengthPrefixed: CodableModelCoding.encode(self))
    }

    /// Reads one operation written by ``encode(into:)`` from untrusted bytes.
    ///
    /// - Throws: ``CodecError`` when the bytes end early, or do not decode as this operation.
    public init(from reader: inout BinaryReader) throws {
        let start = reader.offset
        let data = try reader.nextLengthPrefixed("an operation", limit: CodableModelCoding.operationByteLimit)
        do {
            self = try CodableModelCoding.decode(Self.self, from: data)
        } catch {
            throw CodecError(
                .invalidValue, "the bytes are not a \(Self.self)", cause: error, location: ByteOffset(start))
        }
    }
}
