import Folio
import Foundation

// Two devices of one person, each with its library, syncing through a shared folder.
let root = FileManager.default.temporaryDirectory.appendingPathComponent("folio-notes-\(UUID())")
try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: root) }

// A library is a directory of documents and their change logs; it remembers its device from one launch to the next.
// Edits that merge (text character by character) are not conflicts at all; the others wait for the person.
let policy = ConflictPolicy(default: .merge)
let iPad = try DocumentLibrary(at: root.appendingPathComponent("iPad"), deviceName: "iPad", conflictPolicy: policy)
let mac = try DocumentLibrary(at: root.appendingPathComponent("Mac"), deviceName: "Mac", conflictPolicy: policy)
let cloud = FolderTransport(root: root.appendingPathComponent("Cloud"))

// Create a document in the shared container, edit it, save it to its file, close it, open it again.
let list = try await iPad.create(TextDocument.self, named: "Shopping", in: .shared)
try await list.edit(.append("milk\neggs\nbread\n"))
try await list.save()
try await list.close()
let onIPad = try await iPad.open(named: "Shopping", as: TextDocument.self)
print("iPad saved", try await onIPad.fileURL.lastPathComponent)

// Sync: each device sends what the other lacks; open documents show what arrived at once.
func syncBoth() async throws {
    try await iPad.sync(through: cloud)
    try await mac.sync(through: cloud)
    try await iPad.sync(through: cloud)
}
try await syncBoth()
let onMac = try await mac.open(named: "Shopping", as: TextDocument.self)

// Edits of different lines on both devices: merged, with nothing to decide and nothing recorded but the edits.
try await onIPad.edit(.replace("oat milk\neggs\nbread\n"))
try await onMac.edit(.replace("milk\neggs\nrye bread\n"))
try await syncBoth()
print("merged:", await onMac.model.text.split(separator: "\n"))

// One word replaced two ways: a conflict that waits for the person, who keeps the Mac's version.
try await onIPad.edit(.replace("soy milk\neggs\nrye bread\n"))
try await onMac.edit(.replace("almond milk\neggs\nrye bread\n"))
try await syncBoth()
for version in try await onMac.versions() {
    print("version from \(version.savingDevice.name):", version.contents.text.split(separator: "\n")[0])
}
if let macs = try await onMac.versions().first(where: { $0.savingDevice.name == "Mac" }) {
    try await onMac.replace(with: macs)
}
try await syncBoth()
print("iPad shows:", await onIPad.model.text.split(separator: "\n"), await onIPad.state)
// The loss ledger: each decision (here the person's one choice), and the versions it discarded.
for record in try await onIPad.lossLedger() {
    print("\(record.strategy) by \(record.resolvedBy.name), discarded \(record.discarded.map(\.device.name))")
}
try await onIPad.close()
try await onMac.close()
