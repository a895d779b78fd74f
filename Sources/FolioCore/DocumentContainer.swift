import Foundation

/// Where a document lives: on this device only, or in the synced container (what iCloud calls ubiquitous).
public enum DocumentContainer: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// `Documents/`: on this device.
    case local = 0
    /// `Shared/`: synced between devices.
    case shared = 1

    /// `local` or `shared`.
    public var description: String {
        switch self {
        case .local: "local"
        case .shared: "shared"
        }
    }
}
