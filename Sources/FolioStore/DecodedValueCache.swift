import FolioCore
import Foundation
import GRDB

/// Large values the store decoded lately, by a hash that names exactly one value, within a budget of bytes: the
/// oldest leave first.
///
/// Reading a large change back costs an inflate, a SHA-256 and a decode of its whole body, and a document reads the
/// same few (its heads, the parents of a resolution, the checkpoint it replays from) several times whenever it
/// looks at its versions. Keys are content hashes (a change's hash covers its document and every byte of its
/// encoding; a blob's hash its bytes), so an entry can never go stale: the store consults it only with a hash it
/// has just read from the database, and an entry whose transaction rolled back is simply never asked for.
///
/// - Complexity: lookups and insertions O(1) amortized.
struct DecodedValueCache<Key: Hashable, Value> {
    /// The most bytes the entries may stand for (their encoded size, not their memory footprint, which is
    /// of the same order).
    let byteLimit: Int
    private var entries: [Key: (value: Value, bytes: Int)] = [:]
    /// Keys in insertion order, from `oldest` on; the slots before it are spent.
    private var order: [Key] = []
    private var oldest = 0
    private(set) var bytes = 0

    init(byteLimit: Int) {
        self.byteLimit = byteLimit
    }

    /// The value stored under `key`, if it is still kept.
    func value(_ key: Key) -> Value? {
        entries[key]?.value
    }

    /// Keeps `value`, whose encoding has `size` bytes, under `key`; a value larger than the whole budget is not kept.
    mutating func insert(_ value: Value, for key: Key, size: Int) {
        guard size <= byteLimit, entries[key] == nil else { return }
        while bytes + size > byteLimit, oldest < order.count {
            if let evicted = entries.removeValue(forKey: order[oldest]) { bytes -= evicted.bytes }
            oldest += 1
        }
        if oldest > 64 && oldest * 2 > order.count {
            order.removeFirst(oldest)
            oldest = 0
        }
        entries[key] = (value, size)
        order.append(key)
        bytes += size
    }
}

extension ChangeLogStore {
    /// Large change bodies are worth keeping decoded: the smallest the store deflates (see ``StorageCompression``).
    static let cachedChangeThreshold = StorageCompression.threshold

    /// The change stored under `hash`, decoded from `body` (read only when it is not kept decoded) and kept when
    /// it is large.
    func decodedChange(_ hash: ChangeHash, document: DocumentID, body: () throws -> Data) throws -> Change {
        if let cached = decodedChanges.withLock({ $0.value(hash) }), cached.document == document { return cached }
        let encoded = try StorageCompression.unpackBody(try body())
        let change = try Change(checking: encoded, document: document)
        if encoded.count >= Self.cachedChangeThreshold {
            decodedChanges.withLock { $0.insert(change, for: change.hash, size: encoded.count) }
        }
        return change
    }

    /// Keeps a change just written (`size` bytes encoded) decoded once its transaction commits, when it is large.
    func keepDecoded(_ change: Change, size: Int, in db: Database) {
        guard size >= Self.cachedChangeThreshold else { return }
        db.afterNextTransaction { _ in self.decodedChanges.withLock { $0.insert(change, for: change.hash, size: size) }
        }
    }
}
