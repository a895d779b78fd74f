import FolioCore
import Foundation

/// A version in a document's history, as `NSFileVersion` lists a file's versions: the document as it was when this
/// device saved or closed it, took in another device's work or restored an older version, and every version a
/// person named on any device (``Document/markVersion(_:)``). ``Document/history()`` lists them;
/// `Document.contents(at:)` reads one, ``Document/restore(_:)`` brings one back.
///
/// Versions the device records are coalesced (see ``Document/history()``), so that a day of typing is tens of
/// versions; named versions are changes of the log, synced, and never coalesced.
public struct HistoryVersion: Hashable, Sendable, Identifiable, CustomStringConvertible {
    /// What made the version.
    public enum Occasion: String, Hashable, Sendable, CaseIterable {
        /// This device saved the document.
        case saved
        /// This device closed the document.
        case closed
        /// The document took in changes from another device (or showed them merged).
        case received
        /// An older version was restored (the version is the document right after the restore).
        case restored
        /// A person named the version, on this device or another.
        case named
    }

    /// What changed since the version listed before it.
    public struct Summary: Hashable, Sendable {
        /// How many changes the version has that the one before it lacks (all of its changes for the first).
        public var changes: Int
        /// The devices that made those changes, in order by identity.
        public var devices: [DeviceID]
    }

    /// The version's identity: its head (``heads``' first), or for a named version the change that names it.
    public let id: ChangeHash
    /// When it was recorded (this device's clock), or named (its author's).
    public let date: Timestamp
    /// What made it.
    public let occasion: Occasion
    /// The name a person gave it (``Occasion/named`` only).
    public let name: String?
    /// The device that recorded or named it.
    public let device: DeviceID
    /// The changes whose state it is: the change the document showed, then any others it showed merged with it
    /// (competing heads of a text merged character by character). A named version's are the parents of the change
    /// that names it.
    public let heads: [ChangeHash]
    /// Every change the version includes.
    public let vector: VersionVector
    /// What changed since the version listed before it.
    public internal(set) var summary: Summary

    /// `saved 2026-11-28T10:00:00.000Z, 12 changes by 1 device` (the name first, quoted, for a named version).
    public var description: String {
        let named = name.map { "\($0.debugDescription) " } ?? ""
        return
            "\(named)\(occasion.rawValue) \(date), \(summary.changes) change\(summary.changes == 1 ? "" : "s") by \(summary.devices.count) device\(summary.devices.count == 1 ? "" : "s")"
    }
}
