import Folio
import Foundation

// One device's library, kept in sync with its library on a running `folio serve`:
//   swift run LiveSyncExample DIRECTORY ws://127.0.0.1:8080/v1/libraries/notes TOKEN
let arguments = CommandLine.arguments
let library = try DocumentLibrary(at: URL(fileURLWithPath: arguments[1]), deviceName: "Laptop")
let sync = try await library.startSyncing(with: URL(string: arguments[2])!, token: arguments[3])

// Notes from other devices arrive by themselves, and so do their later edits; this device signs each new note.
for await event in sync.events {
    switch event {
    case .documentAdded(let id, let name):
        let note = try await library.open(id, as: TextDocument.self)
        try await note.edit([.append("seen on the laptop\n")])  // committed at once: it leaves for the server now
        print("\(name): \(await note.model.text.split(separator: "\n"))")
    case .connection(.waiting(let reason, let retryIn)):
        print("offline (\(reason)); next attempt in \(retryIn)")
    default:
        break
    }
}
