/// Where new identities come from.
///
/// Production code uses ``RandomIdentifierSource`` (libuuid); tests and the simulator inject a
/// ``SeededIdentifierSource`` so that every run makes the same identities.
public protocol IdentifierSource: Sendable {
    /// Returns sixteen bytes never returned before by this source.
    func next() -> UUIDBytes
}
