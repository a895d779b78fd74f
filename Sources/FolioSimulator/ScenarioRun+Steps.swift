import FolioCore
import FolioDocuments
import FolioFiles
import FolioModels
import Foundation

extension ScenarioRun {
    /// Does one step; returns the expectation failures of an `expect` step (empty for every other step).
    func perform(_ action: Scenario.Action) async throws(SimulationError) -> [String] {
        switch action {
        case .create(let name, let document, let model, let contents, let container):
            try await create(document, model: model, contents: contents, in: container, on: device(name))
        case .edit(let name, let document, let operation):
            let images = images
            try await withDocument(document, on: name) { handle in
                // The reader checked the model of the name's first document; a rename may have given the name to
                // a document of another model since.
                guard operation.edits(handle.scenarioModel) else {
                    throw SimulationError.step(
                        "\(document) on \(name) is a \(handle.scenarioModel.rawValue) document now (a rename gave it the name); "
                            + "\(operation.key) edits \(operation.modelsDescription) documents")
                }
                try await handle.edit(operation, bytes: images)
            }
        case .undo(let name, let document):
            try await withDocument(document, on: name) { try await $0.undo() }
        case .redo(let name, let document):
            try await withDocument(document, on: name) { try await $0.redo() }
        case .save(let name, let document):
            try await withDocument(document, on: name) { try await $0.save() }
        case .close(let name, let document):
            let device = device(name)
            try await device.close(try documentID(document, on: device))
        case .open(let name, let document):
            let device = device(name)
            _ = try await device.handle(try documentID(document, on: device))
        case .rename(let name, let document, let newName):
            let device = device(name)
            let id = try documentID(document, on: device)
            try await catalogChange(on: device, id) { try await $0.rename(id, to: newName) }
            documentIDs[newName] = id
        case .delete(let name, let document):
            let device = device(name)
            let id = try documentID(document, on: device)
            try await catalogChange(on: device, id) { try await $0.delete(id) }
        case .move(let name, let document, let container):
            let device = device(name)
            let id = try documentID(document, on: device)
            try await catalogChange(on: device, id) { try await $0.move(id, to: container.documentContainer) }
        case .writeFile(let name, let document, let contents):
            try await writeFile(contents, of: document, on: device(name))
        case .importFile(let name, let document, let model, let contents):
            try await importFile(contents, as: model, named: document, on: device(name))
        case .sync(let target):
            let names =
                switch target {
                case .all: devices.map(\.name)
                case .devices(let names): names
                }
            try await sync(names.map(device))
        case .offline(let names):
            for name in names { device(name).isOnline = false }
        case .online(let names):
            for name in names { device(name).isOnline = true }
        case .partition(let groups):
            do { try cloud.partition(groups) } catch { throw .sync(error) }
        case .heal:
            do { try cloud.heal() } catch { throw .sync(error) }
        case .wait(let duration):
            advance(by: duration.milliseconds)
            for device in devices where device.isRunning { try await device.runDueWork() }
        case .crash(let name, let point):
            try await crash(device(name), during: point)
        case .restart(let name):
            let device = device(name)
            guard !device.isRunning else { throw .step("\(name) is running; only a crashed device restarts") }
            do { try await device.start() } catch { throw .document(error) }
            events.append("\(name) restarted from its disk")
        case .restore(let name, let document, let reference):
            let time = Timestamp(millisecondsSince1970: ScenarioRun.start)
            try await withDocument(document, on: name) { handle in
                let history = try await handle.history()
                let version: HistoryVersion?
                switch reference {
                case .number(let number): version = number <= history.count ? history[number - 1] : nil
                case .at(let at):
                    // The device's own clock dates its versions: the time is read on it, skew included.
                    let moment = time.advanced(by: at.milliseconds + self.device(name).skew)
                    version = history.last { $0.date <= moment }
                }
                guard let version else {
                    throw SimulationError.step(
                        "\(document) on \(name) has no version \(Self.describe(reference)) (its history lists \(history.count))"
                    )
                }
                try await handle.restore(version)
            }
        case .markVersion(let name, let document, let versionName):
            try await withDocument(document, on: name) { try await $0.markVersion(versionName) }
        case .resolve(let name, let document, let choice):
            let device = device(name)
            let id = try documentID(document, on: device)
            let handle = try await device.handle(id)
            let outcome: String
            do { outcome = try await handle.resolve(choice) } catch { throw .document(error) }
            events.append("\(name) resolved \(document): \(outcome)")
            // The copies a keep-both resolution made open, as those made while changes arrive do (`pickUp`).
            do {
                for opened in try await device.openNewDocuments() { events.append("\(name) opened \(opened)") }
            } catch {
                throw .document(error)
            }
        case .expect(let expectation):
            return try await check(expectation)
        }
        return []
    }

    /// Does `body` to the device's document (opening it if a step closed it).
    private func withDocument(
        _ document: String, on name: String, _ body: (any SimulatedDocument) async throws -> Void
    ) async throws(SimulationError) {
        let device = device(name)
        let handle = try await device.handle(try documentID(document, on: device))
        do { try await body(handle) } catch { throw Self.translate(error) }
    }

    /// `number 2` or `at 30s`, for messages.
    static func describe(_ reference: Scenario.VersionReference) -> String {
        switch reference {
        case .number(let number): "number \(number)"
        case .at(let time): "at or before \(time)"
        }
    }

    /// A document's error as a step error.
    static func translate(_ error: any Error) -> SimulationError {
        switch error {
        case let error as DocumentError: .document(error)
        case let error as SimulationError: error
        default: .step("\(error)")
        }
    }

    private func create(
        _ name: String, model: Scenario.Model, contents: Scenario.Contents?, in container: Scenario.Container,
        on device: SimulatedDevice
    ) async throws(SimulationError) {
        let library = try device.runningLibrary()
        let handle: any SimulatedDocument
        let container = container.documentContainer
        do {
            switch model {
            case .text: handle = try await create(TextDocument.self, name, contents, container, in: library)
            case .records: handle = try await create(RecordsDocument.self, name, contents, container, in: library)
            case .pages: handle = try await create(PagesDocument.self, name, contents, container, in: library)
            }
        } catch let error as DocumentError {
            throw .document(error)
        } catch {
            throw .step("the initial contents of \(name) are not valid: \(error)")
        }
        device.adopt(handle)
        documentIDs[name] = handle.id
    }

    private func create<Model: SimulatedModel>(
        _ model: Model.Type, _ name: String, _ contents: Scenario.Contents?, _ container: DocumentContainer,
        in library: DocumentLibrary
    ) async throws -> any SimulatedDocument {
        let initial = try contents.map { contents in try Model.initial(contents, bytes: images) }
        return DocumentHandle(try await library.create(model, named: name, in: container, contents: initial))
    }

    /// A rename or a delete through the library, then the open document picks it up.
    private func catalogChange(
        on device: SimulatedDevice, _ id: DocumentID, _ change: (DocumentLibrary) async throws -> Void
    ) async throws(SimulationError) {
        let library = try device.runningLibrary()
        do {
            try await change(library)
            if let handle = device.handles[id] { _ = try await handle.refresh() }
        } catch {
            throw Self.translate(error)
        }
    }

    /// The contents a scenario gives, as the model's snapshot.
    private func snapshot(_ contents: Scenario.Contents) throws(SimulationError) -> DocumentContents {
        do {
            return switch contents.model {
            case .text: try TextDocument.initial(contents, bytes: images).contents()
            case .records: try RecordsDocument.initial(contents, bytes: images).contents()
            case .pages: try PagesDocument.initial(contents, bytes: images).contents()
            }
        } catch {
            throw .step("these contents are not valid: \(error)")
        }
    }

    /// Another program writes the document's file (a package member by member, as an editor would).
    private func writeFile(_ contents: Scenario.Contents, of name: String, on device: SimulatedDevice)
        async throws(SimulationError)
    {
        let library = try device.runningLibrary()
        let id = try documentID(name, on: device)
        let saved: URL?
        do { saved = try await library.savedFiles().first { $0.document == id }?.url } catch { throw .document(error) }
        guard let url = saved else {
            throw .step(
                "\(device.name) has never saved \(name), so it has no file for another program to change; save it there first"
            )
        }
        try write(try snapshot(contents), at: url)
        events.append("another program wrote \(name)'s file on \(device.name)")
    }

    /// Imports a file made outside the library, with these contents, as a new document.
    private func importFile(
        _ contents: Scenario.Contents, as model: Scenario.Model, named name: String, on device: SimulatedDevice
    ) async throws(SimulationError) {
        let library = try device.runningLibrary()
        // Named after the device's directory (`device-1`), never after its name, which is the scenario's text: a
        // name such as `../../x` must not lead outside the run's directory.
        let outside = directory.appendingPathComponent(
            "outside-\(device.root.lastPathComponent)-\(stepNumber)", isDirectory: true)
        let file = outside.appendingPathComponent("import")
        try write(try snapshot(contents), at: file)
        let info: DocumentInfo
        do {
            info =
                switch model {
                // Into the shared container, as a `create` step by default: an imported document syncs.
                case .text: try await library.importFile(at: file, as: TextDocument.self, named: name, into: .shared)
                case .records:
                    try await library.importFile(at: file, as: RecordsDocument.self, named: name, into: .shared)
                case .pages: try await library.importFile(at: file, as: PagesDocument.self, named: name, into: .shared)
                }
        } catch {
            throw .document(error)
        }
        documentIDs[name] = info.id
        _ = try await device.handle(info.id)
        events.append("\(device.name) imported \(name)")
    }

    /// Writes contents outside the save pipeline, through the run's file system: a flat file whole, a package member
    /// by member (members it no longer has are removed; the pipeline's own files are left alone).
    private func write(_ contents: DocumentContents, at url: URL) throws(SimulationError) {
        let files = options.fileSystem
        do {
            switch contents {
            case .data(let data):
                try files.createDirectories(at: url.deletingLastPathComponent())
                try files.writeFile(data, to: url)
            case .package(let package):
                try files.createDirectories(at: url)
                try Self.removeMembers(in: url, at: "", keeping: Set(package.filePaths.map(\.description)), on: files)
                for path in package.filePaths {
                    let member = url.appendingPathComponent(path.description)
                    try files.createDirectories(at: member.deletingLastPathComponent())
                    try files.writeFile(package[path]!.contents, to: member)
                }
            }
        } catch {
            throw .step("cannot write \(url.path): \(error)")
        }
    }

    /// Removes what is under `directory` (at `prefix` in its package) and not in `keep`, but directories and the
    /// pipeline's own files (`.folio…`).
    private static func removeMembers(
        in directory: URL, at prefix: String, keeping keep: Set<String>, on files: any FileSystem
    ) throws {
        for name in try files.contentsOfDirectory(at: directory) {
            let path = prefix + name
            if path.hasPrefix(".folio") { continue }
            let item = directory.appendingPathComponent(name, isDirectory: false)
            switch try files.itemKind(at: item) {
            case .directory: try removeMembers(in: item, at: path + "/", keeping: keep, on: files)
            case .absent: continue
            case .file, .symbolicLink, .other: if !keep.contains(path) { try files.remove(at: item) }
            }
        }
    }

    /// Kills `device`, while saving a document or committing a change if asked.
    private func crash(_ device: SimulatedDevice, during point: Scenario.CrashPoint?) async throws(SimulationError) {
        _ = try device.runningLibrary()
        switch point {
        case .save:
            // The first open document (by name) saves, and the process dies at one of the save's first file steps
            // (a write may be torn): its changes are in the log already.
            var target: (name: String, handle: any SimulatedDocument)?
            for id in device.handles.keys.sorted() {
                guard let handle = device.handles[id] else { continue }
                let name = await handle.displayName()
                if target == nil || name < target!.name { target = (name, handle) }
            }
            if let target {
                device.armCrash(within: 3, using: &faults)
                do {
                    try await target.handle.save()
                    events.append("\(device.name) saved \(target.name) before the crash struck")
                } catch {
                    events.append("\(device.name) crashed while saving \(target.name)")
                }
            } else {
                events.append("\(device.name) crashed with no document open")
            }
        case .append:
            // SQLite commits a change atomically: a process killed while committing leaves the log as it was
            // before (FolioStore's kill test proves it with real SIGKILLs). So the change being committed is simply
            // never acknowledged; every change before it is on disk.
            events.append("\(device.name) crashed while committing a change: that change was never acknowledged")
        case nil:
            events.append("\(device.name) crashed")
        }
        device.kill()
    }
}
