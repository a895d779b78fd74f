import Foundation

/// The seed of a randomized test. By default a fixed one, derived from the test's file and name, so that every run
/// (CI's included) draws the same cases; `FOLIO_SEED=N` replays seed N; `FOLIO_RANDOM_SEEDS=1` draws a fresh seed
/// for every test, to explore beyond the fixed ones.
///
/// Every randomized test prints its seed and puts it in its failure messages, so a failing run can be replayed.
public enum TestSeed {
    /// The seed of the test `test` in `file` (both default to the caller's), printed with how to replay it.
    public static func make(_ test: String = #function, file: String = #fileID) -> UInt64 {
        let environment = ProcessInfo.processInfo.environment
        let seed: UInt64
        if let text = environment["FOLIO_SEED"], let value = UInt64(text) {
            seed = value
        } else if environment["FOLIO_RANDOM_SEEDS"] == "1" {
            seed = UInt64.random(in: 0...UInt64.max)
        } else {
            seed = fixed(for: "\(file) \(test)")
        }
        print("\(file) \(test): seed \(seed) (replay with FOLIO_SEED=\(seed))")
        return seed
    }

    /// The fixed seed of the test named `name`: its FNV-1a hash, the same on every machine and run.
    public static func fixed(for name: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return hash
    }
}
