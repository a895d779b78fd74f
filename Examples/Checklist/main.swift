import Folio
import Foundation

/// A checklist: a custom model whose state and operations are Codable, so Folio encodes them itself.
struct Checklist: DocumentModel, Codable {
    static let documentType = DocumentType(identifier: "com.example.checklist", fileExtensions: ["checklist"])
    var items: [String] = []

    enum Operation: DocumentOperation, Codable {
        case insert(String, at: Int)
        case remove(at: Int)
    }

    /// Applies `operation` and returns its inverse, which is how undo works.
    mutating func apply(_ operation: Operation) throws -> Operation {
        switch operation {
        case .insert(let item, let index) where (0...items.count).contains(index):
            items.insert(item, at: index)
            return .remove(at: index)
        case .remove(let index) where items.indices.contains(index):
            return .insert(items.remove(at: index), at: index)
        default:
            throw ModelError(.invalidOperation, "\(operation) does not fit \(items.count) items")
        }
    }
}

let root = FileManager.default.temporaryDirectory.appendingPathComponent("folio-checklist-\(UUID())")
defer { try? FileManager.default.removeItem(at: root) }
let library = try DocumentLibrary(at: root)
let trip = try await library.create(Checklist.self, named: "Trip")
try await trip.edit([.insert("passport", at: 0), .insert("tickets", at: 1)])  // one change, one undo step
try await trip.edit([.remove(at: 0)])
try await trip.undo()  // the passport is back
try await trip.save()
print(try await trip.fileURL.lastPathComponent, await trip.model.items)
try await trip.close()
let reopened = try await library.open(named: "Trip", as: Checklist.self)
print("reopened:", await reopened.model.items)
