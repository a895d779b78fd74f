import FolioCore
import FolioModels

extension Scenario {
    /// One step of a scenario: an action and the line of the scenario file it came from.
    ///
    /// Equality and hashing look at the action only: the line says where the step was written, not what it does, so
    /// a scenario written out and read back equals the original even though its steps moved to other lines. (Yams'
    /// `Node` treats its position the same way.)
    public struct Step: Hashable, Sendable {
        /// What the step does.
        public var action: Action
        /// The 1-based line of the scenario file where the step starts, or 0 for a step made in code.
        public var line: Int

        /// Creates a step.
        public init(_ action: Action, line: Int = 0) {
            self.action = action
            self.line = line
        }

        /// Whether both steps do the same thing (their lines are not compared).
        public static func == (lhs: Step, rhs: Step) -> Bool {
            lhs.action == rhs.action
        }

        /// Hashes the action (consistent with ``==(_:_:)``).
        public func hash(into hasher: inout Hasher) {
            hasher.combine(action)
        }
    }

    /// What a step does; one case per action key of the scenario file format.
    ///
    /// `device` names a declared device and `document` a document by display name; the parser has checked both.
    public enum Action: Hashable, Sendable {
        /// `create`: the device creates a document of `model`, optionally with initial contents (of that model), in
        /// `container` (`in:`; the shared container unless the step says `in: local`, which keeps the document on
        /// the device).
        case create(device: String, document: String, model: Model, contents: Contents?, container: Container = .shared)
        /// `edit`: one edit of the document; appends one change.
        case edit(device: String, document: String, operation: Operation)
        /// `undo`: undoes the device's last edit of the document.
        case undo(device: String, document: String)
        /// `redo`: redoes the device's last undone edit of the document.
        case redo(device: String, document: String)
        /// `save`: runs the save pipeline now.
        case save(device: String, document: String)
        /// `close`: closes the document.
        case close(device: String, document: String)
        /// `open`: opens the document.
        case open(device: String, document: String)
        /// `rename`: gives the document a new display name.
        case rename(device: String, document: String, to: String)
        /// `delete`: deletes the document.
        case delete(device: String, document: String)
        /// `move` (Folio's addition): moves the document to the device's own documents or the shared container.
        case move(device: String, document: String, to: Container)
        /// `writeFile` (Folio's addition): another program writes these contents into the document's file on the
        /// device's disk; the app notices at its next open or save.
        case writeFile(device: String, document: String, contents: Contents)
        /// `import` (Folio's addition): a file with these contents, made outside the library, is imported as a new
        /// document of `model`.
        case importFile(device: String, document: String, model: Model, contents: Contents)
        /// `sync`: the devices exchange changes with the cloud until nothing is left to send (offline or partitioned
        /// devices are skipped).
        case sync(SyncTarget)
        /// `offline`: cuts these devices' links.
        case offline([String])
        /// `online`: restores these devices' links.
        case online([String])
        /// `partition`: devices in different groups cannot reach each other's changes through the cloud. Devices
        /// named in no group form one more group together.
        case partition([[String]])
        /// `heal: true`: ends the partition.
        case heal
        /// `wait`: advances simulated time (autosave may fire); never negative.
        case wait(SimulatedDuration)
        /// `crash`: the device's process dies, optionally at a chosen point.
        case crash(device: String, during: CrashPoint?)
        /// `restart`: the device starts again from what is on its disk.
        case restart(device: String)
        /// `resolve`: the device resolves the document's open conflict.
        case resolve(device: String, document: String, choose: Choice)
        /// `expect`: assertions about the run so far.
        case expect(Expectation)
        /// `restore`: the device makes the document equal to one of its history's versions again, as a new change
        /// (`Document.restore(_:)`).
        case restore(device: String, document: String, version: VersionReference)
        /// `markVersion`: the device names the version the document shows (`Document.markVersion(_:)`).
        case markVersion(device: String, document: String, name: String)

        /// The step's key in a scenario file, such as `create` or `heal`.
        public var key: String {
            switch self {
            case .create: "create"
            case .edit: "edit"
            case .undo: "undo"
            case .redo: "redo"
            case .save: "save"
            case .close: "close"
            case .open: "open"
            case .rename: "rename"
            case .delete: "delete"
            case .move: "move"
            case .writeFile: "writeFile"
            case .importFile: "import"
            case .sync: "sync"
            case .offline: "offline"
            case .online: "online"
            case .partition: "partition"
            case .heal: "heal"
            case .wait: "wait"
            case .crash: "crash"
            case .restart: "restart"
            case .resolve: "resolve"
            case .expect: "expect"
            case .restore: "restore"
            case .markVersion: "markVersion"
            }
        }

        /// Every action key of the file format, in the order `docs/scenarios.md` lists them.
        public static let keys = [
            "create", "edit", "undo", "redo", "save", "close", "open", "rename", "delete", "sync", "offline", "online",
            "partition", "heal", "wait", "crash", "restart", "resolve", "expect", "move", "writeFile", "import",
            "restore", "markVersion",
        ]
    }

    /// Which version of a document's history a `restore` step brings back.
    public enum VersionReference: Hashable, Sendable {
        /// The version with this number in the device's history, oldest first, from 1 (`version: 2`).
        case number(Int)
        /// The newest version recorded or named at or before this time of the run (`at: 30s`).
        case at(SimulatedDuration)
    }

    /// Where a `create` step makes a document and a `move` step puts it.
    public enum Container: String, Hashable, Sendable, CaseIterable {
        /// The device's own documents (`Documents/`).
        case local
        /// The shared container (`Shared/`).
        case shared
    }

    /// Which devices a `sync` step names.
    public enum SyncTarget: Hashable, Sendable {
        /// `sync: all`: every device.
        case all
        /// `sync: [iPad, Mac]`: these devices, in this order.
        case devices([String])
    }

    /// Where a `crash` step kills the device's process.
    public enum CrashPoint: String, Hashable, Sendable, CaseIterable {
        /// While writing a document's snapshot file or package (its changes are already in the log).
        case save
        /// While committing the next change to the log (that change was never acknowledged; earlier ones were).
        case append
    }

    /// What a `resolve` step keeps.
    public enum Choice: Hashable, Sendable {
        /// The version last written by this device.
        case device(String)
        /// `latest`: the latest-wins strategy.
        case latest
        /// `merge`: a three-way merge.
        case merge
        /// `keepBoth`: the losing versions become new documents.
        case keepBoth

        /// The words `choose` reserves for strategies; no device may be named like them.
        public static let strategyWords = ["latest", "merge", "keepBoth"]
    }

    /// The initial contents a `create` step gives a document.
    public enum Contents: Hashable, Sendable {
        /// `text: "..."`: a text document's text.
        case text(String)
        /// `records: {r1: {name: Ann}}`: a records document's records, in the file's order.
        case records([RecordsDocument.Record])
        /// `pages: {text: "...", images: {cover.png: 1024}}`: a pages document's text, and its images by name with
        /// their size in bytes (the bytes derive from the seed, the name and a counter).
        case pages(text: String, images: [String: Int])

        /// The model these contents belong to.
        public var model: Model {
            switch self {
            case .text: .text
            case .records: .records
            case .pages: .pages
            }
        }
    }
}

extension Scenario.Container {
    /// The library's container of that name.
    var documentContainer: DocumentContainer {
        switch self {
        case .local: .local
        case .shared: .shared
        }
    }
}
