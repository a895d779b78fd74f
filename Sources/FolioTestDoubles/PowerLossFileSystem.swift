import FolioCore
import FolioFiles
import Foundation
import Synchronization

/// A ``FileSystem`` on a real directory that also models what a power cut would leave there, for the power-loss
/// sweeps of the save pipeline.
///
/// Every call is performed on the real disk (``PosixFileSystem`` without fsync: durability is the model's), and
/// mirrored in a model of the tree under `root` made of inodes. What is durable:
/// - a file's contents as of its last `synchronizeFile`;
/// - a directory's entries as of its last `synchronizeDirectory`: creations, renames and removals are volatile until
///   then. A rename is one operation, atomic across the power cut (it survives whole or not at all), as journaling
///   file systems make it; syncing a directory also makes durable the earlier operations that share a directory
///   with the ones it syncs, so that every directory's durable history stays in order.
///
/// What was on disk when the model was made counts as durable. Steps (the mutating calls) are numbered from 0; at
/// step `cutAt` the power goes: that call and every later one throw `crashed`; a write cut there is under way and
/// may land in part. ``materialize(into:seed:)`` then writes out what survives: the durable state plus a seeded
/// subset of the volatile operations (each directory operation survives or not; an unsynced file keeps its old
/// contents, or is emptied, or keeps its new contents whole or torn at 512-byte sectors, the lost sectors reading
/// as zeros and the size cut at a sector boundary).
package final class PowerLossFileSystem: FileSystem {
    private let base = PosixFileSystem(synchronizes: false)
    /// The directory modeled.
    package let root: URL
    private let rootPath: String
    private let state: Mutex<Model>
    private let supply: (any PowerSupply)?

    /// Models the tree under `root` (top-level names in `ignoring` are left out), cutting the power at step `cutAt`
    /// (never when `nil`). With `supply`, the disk shares its power with another model (the store's files): a cut
    /// there cuts this one, and a cut here cuts it.
    package init(
        root: URL, ignoring ignored: Set<String> = [], cutAt: Int? = nil, sharing supply: (any PowerSupply)? = nil
    )
        throws
    {
        self.root = root
        self.supply = supply
        rootPath = root.standardizedFileURL.path
        var model = Model(cutAt: cutAt)
        try model.scan(root, into: model.rootID, ignoring: ignored)
        state = Mutex(model)
    }

    /// The steps performed, in order, the cut one included.
    package var steps: [FaultInjectingFileSystem.Step] { state.withLock { $0.steps } }

    /// Whether the power was cut (here or on the shared supply).
    package var isCut: Bool { state.withLock { $0.isCut } || supply?.isCut == true }

    /// Writes what survives a power cut now into `destination` (an existing, empty directory), choosing with `seed`.
    package func materialize(into destination: URL, seed: UInt64) throws {
        let model = state.withLock { $0 }
        var random = SplitMix64(seed: seed)
        try model.surviving(choosingWith: &random).write(into: destination)
    }

    // MARK: - Reads

    // Reads pass to the disk while the power is on.
    package func itemKind(at url: URL) throws -> FileItemKind { try whilePowered("lstat", url, base.itemKind) }
    package func attributes(at url: URL) throws -> FileAttributes { try whilePowered("lstat", url, base.attributes) }
    package func contents(of url: URL) throws -> Data { try whilePowered("read", url, base.contents) }
    package func contentsOfDirectory(at url: URL) throws -> [String] {
        try whilePowered("list", url, base.contentsOfDirectory)
    }

    /// `read` of `url`, once the power is known to be on (``checkAlive(_:_:)``).
    private func whilePowered<Value>(_ operation: String, _ url: URL, _ read: (URL) throws -> Value) throws -> Value {
        try checkAlive(operation, url)
        return try read(url)
    }

    // MARK: - Steps

    package func createDirectory(at url: URL) throws {
        try step(.createDirectory, url) { () throws in
            try base.createDirectory(at: url)
        } model: { model, path in
            model.createDirectory(at: path)
        }
    }

    package func writeFile(_ data: Data, to url: URL) throws {
        try step(.writeFile, url, byteCount: data.count, modelsCut: true) {
            try base.writeFile(data, to: url)
        } model: { model, path in
            model.write(data, at: path)
        }
    }

    package func synchronizeFile(at url: URL) throws {
        try step(.synchronizeFile, url) {
        } model: { model, path in
            model.synchronize(path)
        }
    }

    package func synchronizeDirectory(at url: URL) throws {
        try step(.synchronizeDirectory, url) {
        } model: { model, path in
            model.synchronize(path)
        }
    }

    package func rename(_ source: URL, to destination: URL) throws {
        let to = relativePath(destination)
        try step(.rename, source, destination: destination) {
            try base.rename(source, to: destination)
        } model: { model, path in
            model.rename(path, to: to)
        }
    }

    package func remove(at url: URL) throws {
        try step(.remove, url) { () throws in
            try base.remove(at: url)
        } model: { model, path in
            model.remove(path)
        }
    }

    // MARK: - Helpers

    private func checkAlive(_ operation: String, _ url: URL) throws {
        if isCut {
            throw FileSystemError(.crashed, operation: operation, path: url.path)
        }
    }

    /// The path components of `url` under the root (`nil` outside it, which the model ignores).
    private func relativePath(_ url: URL) -> [String]? {
        let path = url.standardizedFileURL.path
        if path == rootPath { return [] }
        guard path.hasPrefix(rootPath + "/") else { return nil }
        return path.dropFirst(rootPath.count + 1).split(separator: "/").map(String.init)
    }

    /// Numbers a step; at the cut, models a write as under way (`modelsCut`) and throws; otherwise performs it on
    /// the disk, then in the model. The lock is held throughout, so steps are numbered in the order they happen.
    private func step(
        _ kind: FaultInjectingFileSystem.Step.Kind, _ url: URL, destination: URL? = nil, byteCount: Int = 0,
        modelsCut: Bool = false, _ body: () throws -> Void,
        model change: (inout Model, [String]) -> Void
    ) throws {
        let path = relativePath(url)
        let record = FaultInjectingFileSystem.Step(
            kind: kind, path: url.path, destination: destination?.path, byteCount: byteCount)
        try state.withLock { (model: inout Model) throws -> Void in
            let crashed = FileSystemError(.crashed, operation: kind.rawValue, path: url.path)
            guard !model.isCut, supply?.isCut != true else { throw crashed }
            model.steps.append(record)
            if model.steps.count - 1 == model.cutAt {
                model.isCut = true
                supply?.cut()
                if modelsCut, let path { change(&model, path) }
                throw crashed
            }
            try body()
            if let path { change(&model, path) }
        }
    }
}

/// The model: inodes, each directory's durable and current entries, each file's durable and current contents, and
/// the directory operations not yet durable, in order.
private struct Model {
    struct File {
        var durable: Data
        var current: Data
        /// Whether it was written since its last sync.
        var isDirty = false
    }

    /// One entry change of a directory operation: `name` in `directory` now names `target` (removed when `nil`).
    struct EntryChange {
        var directory: Int
        var name: String
        var target: Int?
    }

    var cutAt: Int?
    var isCut = false
    var steps: [FaultInjectingFileSystem.Step] = []
    var files: [Int: File] = [:]
    var durableEntries: [Int: [String: Int]] = [:]
    var currentEntries: [Int: [String: Int]] = [:]
    /// Directory operations not yet durable, each a list of entry changes applied together.
    var pending: [[EntryChange]] = []
    let rootID = 0
    var nextID = 1

    init(cutAt: Int?) {
        self.cutAt = cutAt
        durableEntries[rootID] = [:]
        currentEntries[rootID] = [:]
    }

    /// Adds what is on disk under `url` as durable.
    mutating func scan(_ url: URL, into directory: Int, ignoring ignored: Set<String> = []) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: url.path) where !ignored.contains(name) {
            let child = url.appendingPathComponent(name)
            let id = nextID
            nextID += 1
            if try PosixFileSystem().itemKind(at: child) == .directory {
                durableEntries[id] = [:]
                currentEntries[id] = [:]
                try scan(child, into: id)
            } else {
                let contents = try Data(contentsOf: child)
                files[id] = File(durable: contents, current: contents)
            }
            durableEntries[directory]![name] = id
            currentEntries[directory]![name] = id
        }
    }

    /// The inode at `path` now, and its parent directory's.
    func lookup(_ path: [String]) -> (parent: Int, id: Int?)? {
        guard let name = path.last else { return nil }
        var directory = rootID
        for component in path.dropLast() {
            guard let next = currentEntries[directory]?[component], currentEntries[next] != nil else { return nil }
            directory = next
        }
        return (directory, currentEntries[directory]?[name])
    }

    /// Performs a directory operation now; it stays volatile until a sync makes it durable.
    mutating func perform(_ operation: [EntryChange]) {
        for change in operation { currentEntries[change.directory]![change.name] = change.target }
        pending.append(operation)
    }

    mutating func createDirectory(at path: [String]) {
        guard let (parent, _) = lookup(path) else { return }
        let id = nextID
        nextID += 1
        durableEntries[id] = [:]
        currentEntries[id] = [:]
        perform([EntryChange(directory: parent, name: path.last!, target: id)])
    }

    mutating func write(_ data: Data, at path: [String]) {
        guard let (parent, existing) = lookup(path) else { return }
        if let existing, files[existing] != nil {
            // O_TRUNC on an existing file keeps its inode.
            files[existing]!.current = data
            files[existing]!.isDirty = true
            return
        }
        let id = nextID
        nextID += 1
        files[id] = File(durable: Data(), current: data, isDirty: true)
        perform([EntryChange(directory: parent, name: path.last!, target: id)])
    }

    mutating func rename(_ path: [String], to destination: [String]?) {
        guard let destination, let (parent, id) = lookup(path), let id,
            let (destinationParent, _) = lookup(destination)
        else { return }
        perform([
            EntryChange(directory: parent, name: path.last!, target: nil),
            EntryChange(directory: destinationParent, name: destination.last!, target: id),
        ])
    }

    mutating func remove(_ path: [String]) {
        guard let (parent, id) = lookup(path), let id else { return }
        removeTree(id, named: path.last!, in: parent)
    }

    /// A directory's contents go first, one removal each, as `unlinkat` does them.
    private mutating func removeTree(_ id: Int, named name: String, in parent: Int) {
        if let entries = currentEntries[id] {
            for (childName, child) in entries.sorted(by: { $0.key < $1.key }) {
                removeTree(child, named: childName, in: id)
            }
        }
        perform([EntryChange(directory: parent, name: name, target: nil)])
    }

    /// `fsync` of the file or directory at `path`.
    mutating func synchronize(_ path: [String]) {
        let id: Int
        if path.isEmpty {
            id = rootID
        } else {
            guard let (_, found) = lookup(path), let found else { return }
            id = found
        }
        if files[id] != nil {
            files[id]!.durable = files[id]!.current
            files[id]!.isDirty = false
            return
        }
        // The operations on this directory, and every earlier one that shares a directory with one of them.
        var directories: Set<Int> = [id]
        var durable = Set<Int>()
        for index in pending.indices.reversed()
        where pending[index].contains(where: { directories.contains($0.directory) }) {
            durable.insert(index)
            directories.formUnion(pending[index].map(\.directory))
        }
        for index in durable.sorted() {
            for change in pending[index] { durableEntries[change.directory]![change.name] = change.target }
        }
        pending = pending.enumerated().filter { !durable.contains($0.offset) }.map(\.element)
    }

    /// What survives a power cut: durable entries plus a seeded subset of the pending operations; each file's
    /// contents as ``File/surviving(choosingWith:)`` says.
    func surviving(choosingWith random: inout SplitMix64) -> SurvivingTree {
        var entries = durableEntries
        for operation in pending where random.next() % 2 == 0 {
            for change in operation { entries[change.directory]![change.name] = change.target }
        }
        var contents: [Int: Data] = [:]
        for (id, file) in files.sorted(by: { $0.key < $1.key }) {
            contents[id] = file.surviving(choosingWith: &random)
        }
        return SurvivingTree(rootID: rootID, entries: entries, contents: contents)
    }
}

extension Model.File {
    static let sectorSize = 512

    /// The contents after a power cut: durable ones when synced since the last write; otherwise the old contents,
    /// an empty file (the truncation landed, the data did not), the new contents whole, or the new contents torn.
    func surviving(choosingWith random: inout SplitMix64) -> Data {
        guard isDirty else { return durable }
        switch random.next() % 4 {
        case 0: return durable
        case 1: return Data()
        case 2: return current
        default:
            let sectors = (current.count + Self.sectorSize - 1) / Self.sectorSize
            let kept = Int(random.next() % UInt64(sectors + 1))
            var torn = Data(count: min(kept * Self.sectorSize, current.count))
            for sector in 0..<kept where random.next() % 2 == 0 {
                let range = (sector * Self.sectorSize)..<min((sector + 1) * Self.sectorSize, current.count)
                torn.replaceSubrange(range, with: current[range])
            }
            return torn
        }
    }
}

/// The tree a power cut leaves, ready to be written out.
private struct SurvivingTree {
    var rootID: Int
    var entries: [Int: [String: Int]]
    var contents: [Int: Data]

    func write(into destination: URL) throws {
        try write(rootID, into: destination)
    }

    private func write(_ directory: Int, into url: URL) throws {
        for (name, id) in entries[directory] ?? [:] {
            let child = url.appendingPathComponent(name)
            if entries[id] != nil {
                try FileManager.default.createDirectory(at: child, withIntermediateDirectories: false)
                try write(id, into: child)
            } else if let data = contents[id] {
                try data.write(to: child)
            }
        }
    }
}

/// Another model on the same power supply (the store's files on the SQLite VFS), so that one cut stops both.
package protocol PowerSupply: Sendable {
    /// Whether the power was cut.
    var isCut: Bool { get }
    /// Cuts the power now.
    func cut()
}
