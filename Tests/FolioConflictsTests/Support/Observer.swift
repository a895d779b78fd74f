import FolioConflicts
import FolioCore
import FolioTestDoubles

/// A device's view of one document, in pure values: its log, the head it shows and the conflict engine, carrying
/// out what the engine decides as a `Document` does (appending resolutions, keeping copies).
struct Observer<Model: DocumentModel> {
    var log: MemoryLog<Model>
    var engine: ConflictEngine<Model>
    var writer: ChangeWriter
    /// The head whose state is shown: after every delivery, the version every device shows.
    var shown: ChangeHash?
    /// Whether settlements are recorded as they are decided (otherwise the engine is only observed).
    let settles: Bool
    let displayName = "Notes"
    let devices: [DeviceID: Device]
    /// The copies `keepBoth` settlements made, in the order they were made.
    private(set) var copies: [ConflictCopy<Model>] = []
    /// Every action the engine asked for, in order.
    private(set) var actions: [ConflictAction<Model>] = []
    private var clock: Int64 = 1_000_000

    init(document: DocumentID, device: Device, policy: ConflictPolicy, settles: Bool, devices: [DeviceID: Device]) {
        log = MemoryLog(document: document)
        engine = ConflictEngine(document: document, policy: policy)
        writer = ChangeWriter(document: document, device: device)
        self.settles = settles
        self.devices = devices
    }

    /// Takes one change from elsewhere, then looks at the heads again (and settles when it settles).
    mutating func deliver(_ change: Change) {
        log.receive(change)
        refresh()
    }

    /// Shows the head every device shows, groups the heads, and carries out what the policy says.
    mutating func refresh() {
        observe()
        guard settles,
            let action = engine.nextAction(
                hasResolver: false, in: log, displayName: displayName, devices: devices)
        else { return }
        actions.append(action)
        if case .settle(let settlement) = action { record(settlement) }
    }

    /// Records `settlement`: its copies, then its resolution on its parents, shown from then on.
    mutating func record(_ settlement: ConflictSettlement<Model>) {
        copies += settlement.copies
        let parents = settlement.parents.map { log.change($0)! }
        clock += 1
        let change = writer.make(.resolution(settlement.resolution), on: parents, at: clock)
        log.receive(change)
        shown = change.hash
        observe()
    }

    /// Hands the heads and their states to the engine.
    mutating func observe() {
        let split = log.primaryParentRule.contentHeads(among: log.heads)
        // As a document refreshing: the version every device shows.
        shown = split.winner?.hash
        var states: [ChangeHash: Model] = [:]
        for head in split.versions { states[head.hash] = log.state(at: head) }
        engine.observe(split, states: states, shown: shown!)
    }

    /// The state shown.
    var state: Model { engine.versions[0].state }

    /// The loss ledger of the log.
    var ledger: [LossRecord<Model>] {
        ConflictEngine<Model>.lossLedger(of: log.resolutions, in: log, devices: devices)
    }
}
