import FolioCore
import FolioMerge
import FolioModels
import FolioStore
import Foundation

/// A recorded concurrent editing history in the editing-traces format (`Benchmarks/traces/README.md`, from
/// josephg/editing-traces, CC BY 4.0): transactions by agents, each typed on the merged result of the transactions
/// it names as parents, with positions in Unicode scalars.
public struct ConcurrentEditingTrace: Sendable {
    /// One transaction.
    public struct Transaction: Sendable {
        /// Who typed it (0-based).
        public var agent: Int
        /// The earlier transactions it was typed on; empty: the start content.
        public var parents: [Int]
        /// Its patches as operations, in order: each `[position, deleted, inserted]` is a delete, then an insert
        /// at `position`.
        public var operations: [TextDocument.Operation]
    }

    /// Why a trace cannot be read.
    public struct LoadError: Error, CustomStringConvertible {
        /// What is wrong, naming the file.
        public var description: String
    }

    /// The text the transactions start from.
    public var startContent: String
    /// The text every transaction merged gives.
    public var endContent: String
    /// The transactions, parents first.
    public var transactions: [Transaction]
    /// The number of agents.
    public var agentCount: Int { (transactions.map(\.agent).max() ?? -1) + 1 }

    /// Reads a trace, gzip-compressed when its name ends in `.gz` (decompressed in the process).
    ///
    /// - Throws: ``LoadError`` when the file cannot be read or is not a concurrent trace: every parent must be an
    ///   earlier transaction and every agent at most 1,000.
    public static func load(_ url: URL) throws(LoadError) -> ConcurrentEditingTrace {
        let (root, txns) = try read(url)
        var transactions: [Transaction] = []
        transactions.reserveCapacity(txns.count)
        for txn in txns {
            let number = transactions.count
            guard let agent = txn["agent"] as? Int, (0...1_000).contains(agent),
                let parents = txn["parents"] as? [Int], parents.allSatisfy({ (0..<number).contains($0) }),
                let patches = txn["patches"] as? [[Any]]
            else {
                throw LoadError(
                    description: "transaction \(number) of \(url.path) has no valid agent, parents or patches")
            }
            let operations = try Self.operations(of: patches, in: number, of: url)
            transactions.append(Transaction(agent: agent, parents: parents, operations: operations))
        }
        return ConcurrentEditingTrace(
            startContent: root["startContent"] as? String ?? "", endContent: end(of: root), transactions: transactions)
    }

    /// Reads a sequential trace (one person typing: transactions without agents or parents) as a concurrent trace of
    /// one agent, every `patchesPerTransaction` consecutive patches one transaction made on the one before.
    ///
    /// - Throws: ``LoadError`` when the file cannot be read or is not an editing trace.
    public static func loadSequential(_ url: URL, patchesPerTransaction: Int) throws(LoadError)
        -> ConcurrentEditingTrace
    {
        precondition(patchesPerTransaction >= 1, "a transaction holds at least one patch")
        let (root, txns) = try read(url)
        var patches: [[Any]] = []
        for (number, txn) in txns.enumerated() {
            guard let more = txn["patches"] as? [[Any]] else {
                throw LoadError(description: "transaction \(number) of \(url.path) has no patches")
            }
            patches += more
        }
        var transactions: [Transaction] = []
        for start in stride(from: 0, to: patches.count, by: patchesPerTransaction) {
            let number = transactions.count
            let group = Array(patches[start..<min(start + patchesPerTransaction, patches.count)])
            transactions.append(
                Transaction(
                    agent: 0, parents: number == 0 ? [] : [number - 1],
                    operations: try Self.operations(of: group, in: number, of: url)))
        }
        return ConcurrentEditingTrace(
            startContent: root["startContent"] as? String ?? "", endContent: end(of: root), transactions: transactions)
    }

    private static func end(of root: [String: Any]) -> String { root["endContent"] as? String ?? "" }

    private static func operations(of patches: [[Any]], in number: Int, of url: URL) throws(LoadError)
        -> [TextDocument.Operation]
    {
        var operations: [TextDocument.Operation] = []
        for patch in patches {
            guard patch.count == 3, let position = patch[0] as? Int, let deleted = patch[1] as? Int,
                let inserted = patch[2] as? String
            else {
                throw LoadError(description: "a patch of transaction \(number) of \(url.path) is malformed")
            }
            if deleted > 0 { operations.append(.delete(at: position, count: deleted)) }
            if !inserted.isEmpty { operations.append(.insert(at: position, text: inserted)) }
        }
        return operations
    }

    /// The trace's JSON object and its transactions.
    private static func read(_ url: URL) throws(LoadError) -> (root: [String: Any], txns: [[String: Any]]) {
        let json: Data
        do {
            if url.pathExtension == "gz" {
                do { json = try Gunzip.decompress(Data(contentsOf: url)) } catch let failure as Gunzip.Failure {
                    throw LoadError(description: "\(url.path) is \(failure)")
                }
            } else {
                json = try Data(contentsOf: url)
            }
        } catch let error as LoadError {
            throw error
        } catch {
            throw LoadError(description: "cannot read \(url.path): \(error)")
        }
        guard let root = try? JSONSerialization.jsonObject(with: json) as? [String: Any],
            root["endContent"] is String, let txns = root["txns"] as? [[String: Any]]
        else {
            throw LoadError(description: "\(url.path) is not an editing trace (no endContent or txns)")
        }
        return (root, txns)
    }

    /// Records the trace in `store` as the changes of devices editing a text document: each agent is the device of
    /// `authors` at its index, each transaction one edit made on the changes of its parents (`root`, the document's
    /// start, for none). A transaction typed on several parents is an edit made on their merge (`Edit.isMadeOnMerge`),
    /// as a device that shows them merged makes it. Returns the changes recorded last on every branch: the heads the
    /// trace ends with.
    ///
    /// - Precondition: `authors` has a device per agent.
    /// - Throws: what appending to `store` throws.
    public func record(
        in store: ChangeLogStore, document: DocumentID, root: ChangeHash, authors: [Device]
    ) throws -> [ChangeHash] {
        var changes: [ChangeHash] = []
        changes.reserveCapacity(transactions.count)
        var isParent = [Bool](repeating: false, count: transactions.count)
        for transaction in transactions {
            let parents = transaction.parents.isEmpty ? [root] : transaction.parents.map { changes[$0] }
            for parent in transaction.parents { isParent[parent] = true }
            let edit = Edit(
                operations: TextDocument.Operation.encodeGroup(transaction.operations), isMadeOnMerge: parents.count > 1
            )
            let made = try store.append(
                [.edit(edit)], to: document, on: .heads(parents), author: authors[transaction.agent])
            changes.append(made.last!.hash)
        }
        return changes.indices.filter { !isParent[$0] }.map { changes[$0] }
    }
}
