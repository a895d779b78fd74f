import Folio
import Foundation

// One person's device co-editing a shared note with others, live, through a running `folio serve`. Start it once per
// person, each with a directory of their own, all with the same library address and token:
//   swift run CoEditingExample DIRECTORY ws://127.0.0.1:8080/v1/libraries/notes TOKEN NAME "TEXT" PEOPLE
// The first to start creates the note "Meeting notes" (start the others once it has joined: two started at once would
// each make a note of their own); the others open it when it arrives. Each adds a line of their
// own and types TEXT into it, 8 keystrokes a second, at the end of their line (where their cursor is). Every keystroke
// leaves as it is made; what the others type shows as it arrives. Typing together is no conflict: the note merges
// character by character, and its log holds only keystrokes. Each person's cursor shows on the others' screens, after
// the character it follows. Once PEOPLE lines are finished (each ends with " ✓") and every cursor is at the end of
// its line, it prints the note and where the others' cursors are, selects its own line to say it is done, and stops
// once everyone is.

/// Prints at once, piped or not (`print` to a pipe waits for a full buffer).
func say(_ text: String, terminator: String = "\n") {
    FileHandle.standardOutput.write(Data((text + terminator).utf8))
}

let arguments = CommandLine.arguments
guard arguments.count == 7, let people = Int(arguments[6]), people > 0 else {
    say("usage: CoEditingExample DIRECTORY LIBRARY-URL TOKEN NAME TEXT PEOPLE")
    exit(2)
}
let (name, text) = (arguments[4], arguments[5])
let library = try DocumentLibrary(
    at: URL(fileURLWithPath: arguments[1]), deviceName: name, conflictPolicy: ConflictPolicy(default: .merge))
let sync = try await library.startSyncing(with: URL(string: arguments[2])!, token: arguments[3])

// Caught up with the server: the note is there, or arrives soon, or this device is the first and makes it.
for await event in sync.events {
    if case .syncFinished = event { break }
}
var found = try? await library.open(named: "Meeting notes", as: TextDocument.self)
let deadline = ContinuousClock.now + .seconds(3)
while found == nil, ContinuousClock.now < deadline {
    try await Task.sleep(for: .milliseconds(100))
    found = try? await library.open(named: "Meeting notes", as: TextDocument.self)
}
let note: Document<TextDocument>
if let found {
    note = found
} else {
    note = try await library.create(TextDocument.self, named: "Meeting notes", in: .shared)
}
say("\(name) joined")

/// Where a person's line ("NAME: …") of a text is, without its line break, in scalars.
enum Lines {
    static func range(of name: String, in text: String) -> Range<Int>? {
        var position = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let start = position
            position += line.unicodeScalars.count
            if line.hasPrefix("\(name): ") { return start..<position }
            position += 1
        }
        return nil
    }

    static func end(of name: String, in text: String) -> Int? { range(of: name, in: text)?.upperBound }
}

// A line of one's own, then the text, keystroke by keystroke, at the end of it.
try await note.edit(.append("\(name): \n"))
for character in text + " ✓" {
    try await Task.sleep(for: .milliseconds(125))
    // The position is read from the model and used in one step, so that nothing arriving moves the text between.
    try await note.perform { [name] document in
        guard let end = Lines.end(of: name, in: document.model.text) else { return }
        try document.edit(.insert(at: end, text: String(character)))
        // The cursor follows what was just typed; the others see it there.
        try document.setSelection(TextSelection(cursor: end + String(character).unicodeScalars.count))
    }
}

// Everyone's line finished: the note as this device shows it.
func finished(_ text: String) -> Bool {
    text.split(separator: "\n").filter { $0.hasSuffix(" ✓") }.count >= people
}
while !finished(await note.model.text) {
    try await Task.sleep(for: .milliseconds(50))
}

/// Whether every other person's selection ends at the end of their line (and, with `selectingTheirLine`, starts at
/// its start: done).
func othersAreAtTheirLineEnds(selectingTheirLine: Bool) async -> Bool {
    let (text, others) = (await note.model.text, await note.others)
    return others.count == people - 1
        && others.allSatisfy { other in
            guard let line = Lines.range(of: other.name, in: text), let selection = other.selection else {
                return false
            }
            return selection.head == line.upperBound && (!selectingTheirLine || selection.anchor == line.lowerBound)
        }
}
let waitLimit = ContinuousClock.now + .seconds(20)
while await !othersAreAtTheirLineEnds(selectingTheirLine: false), ContinuousClock.now < waitLimit {
    try await Task.sleep(for: .milliseconds(50))
}
let shown = await note.model.text
say(shown, terminator: "")
say("cursors:")
for other in await note.others.sorted(by: { $0.name < $1.name }) {
    guard let cursor = other.selection?.head else {
        say("  \(other.name): not placed")
        continue
    }
    let before = String(String.UnicodeScalarView(shown.unicodeScalars.prefix(cursor).suffix(8)))
    say("  \(other.name) after “\(before)”")
}
// Done: this person's whole line selected. Everyone stays until everyone is done, so that no cursor leaves early.
try await note.perform { [name] document in
    guard let line = Lines.range(of: name, in: document.model.text) else { return }
    try document.setSelection(TextSelection(anchor: line.lowerBound, head: line.upperBound))
}
while await !othersAreAtTheirLineEnds(selectingTheirLine: true), ContinuousClock.now < waitLimit {
    try await Task.sleep(for: .milliseconds(50))
}
try await note.close()
await sync.stop()
