/// A scenario: devices editing documents and syncing through a simulated cloud, and what must hold along the way.
///
/// A scenario is what a scenario file (`docs/scenarios.md`) says, checked and typed: ``ScenarioParser`` reads one
/// from YAML, and ``yaml`` writes one back in canonical form. Every field has the meaning and the default the file
/// format gives it.
///
/// Two scenarios are equal when they describe the same run: the source line a step came from is not compared (see
/// ``Step``).
public struct Scenario: Hashable, Sendable {
    /// The scenario's name, shown in reports.
    public var name: String
    /// Free text shown in reports, if the file gives any.
    public var description: String?
    /// The seed every random choice of the run derives from.
    public var seed: UInt64
    /// The model of documents whose `create` step names none.
    public var model: Model
    /// The conflict strategy the devices use.
    public var strategy: Strategy
    /// The devices, in the order the file declares them; names are unique.
    public var devices: [Device]
    /// The simulated link between each device and the cloud.
    public var network: Network
    /// The steps, run in order.
    public var steps: [Step]

    /// The seed when the file gives none.
    public static let defaultSeed: UInt64 = 1

    /// Creates a scenario; the defaults are the file format's.
    public init(
        name: String,
        description: String? = nil,
        seed: UInt64 = Scenario.defaultSeed,
        model: Model = .text,
        strategy: Strategy = .askUser,
        devices: [Device],
        network: Network = .perfect,
        steps: [Step]
    ) {
        self.name = name
        self.description = description
        self.seed = seed
        self.model = model
        self.strategy = strategy
        self.devices = devices
        self.network = network
        self.steps = steps
    }
}

extension Scenario {
    /// A built-in document model (FolioModels), as the file names it.
    public enum Model: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// `TextDocument`: a flat UTF-8 file.
        case text
        /// `RecordsDocument`: a flat file holding an ordered list of records with string fields.
        case records
        /// `PagesDocument`: a file package with a text and images.
        case pages

        /// The file's word: `text`, `records` or `pages`.
        public var description: String { rawValue }
    }

    /// A conflict strategy, as the file names it.
    public enum Strategy: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// The document enters `.inConflict` until a `resolve` step settles it.
        case askUser
        /// The latest version by wall time (then lamport, then device) wins.
        case latestWins
        /// A three-way merge from the common ancestor; what cannot merge falls back to asking the user.
        case merge
        /// The losing versions become new documents named "NAME (conflict from DEVICE)".
        case keepBoth

        /// The file's word, such as `latestWins`.
        public var description: String { rawValue }
    }

    /// A simulated device.
    public struct Device: Hashable, Sendable {
        /// The device's name, unique in the scenario.
        public var name: String
        /// How far the device's wall clock is off (negative: behind).
        public var clockSkew: SimulatedDuration

        /// Creates a device.
        public init(name: String, clockSkew: SimulatedDuration = .zero) {
            self.name = name
            self.clockSkew = clockSkew
        }
    }

    /// The simulated link between each device and the cloud.
    public struct Network: Hashable, Sendable {
        /// One-way latency, to and from the cloud; not negative.
        public var latency: SimulatedDuration
        /// The probability, in 0...1, that a message is dropped (it is retried).
        public var loss: Double
        /// The probability, in 0...1, that a message is delivered twice.
        public var duplicate: Double
        /// The probability, in 0...1, that a message overtakes an earlier one.
        public var reorder: Double

        /// A perfect link: no latency, nothing lost, duplicated or reordered.
        public static let perfect = Network(latency: .zero, loss: 0, duplicate: 0, reorder: 0)

        /// Creates a link; the defaults are a perfect one's.
        public init(latency: SimulatedDuration = .zero, loss: Double = 0, duplicate: Double = 0, reorder: Double = 0) {
            self.latency = latency
            self.loss = loss
            self.duplicate = duplicate
            self.reorder = reorder
        }
    }
}
