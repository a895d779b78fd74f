import FolioCore
import FolioDocuments
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A package's manifest is read from disk and untrusted: numbers the next save adds to, and counts, are bounded
/// when it is read, so a planted manifest is a corrupt package, never a trap.
@Suite(.workPool) struct PackageManifestTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    var url: URL { directory.file("Pages.folio") }

    /// Saves the sample package, then rewrites one field of its manifest.
    func plantManifest(_ key: String, _ value: Any) throws {
        _ = try SavePipeline().savePackage(try Samples.oldPackage(), to: url)
        let manifestURL = url.appendingPathComponent(".folio-manifest")
        var manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
        manifest[key] = value
        try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]).write(to: manifestURL)
    }

    /// The next save numbers its manifest one more than the committed one's: at `Int.max` that addition trapped.
    @Test(arguments: [Int.max, Int.max - 1, 1 << 62])
    func aGenerationTheNextSaveCannotFollowIsCorrupt(generation: Int) throws {
        try plantManifest("generation", generation)
        let save = try #require(throws: SaveError.self) {
            _ = try SavePipeline().savePackage(try Samples.newPackage(), to: url)
        }
        #expect(save.code == .corruptPackage, "\(save)")
        #expect(save.message.contains("generation"), "\(save)")
        let read = try #require(throws: SaveError.self) { _ = try SavePipeline().readPackage(at: url) }
        #expect(read.code == .corruptPackage, "\(read)")
    }

    @Test func anOrdinaryGenerationIsKeptAndFollowed() throws {
        try plantManifest("generation", 41)
        #expect(try SavePipeline().readPackage(at: url) == Samples.oldPackage())
        _ = try SavePipeline().savePackage(try Samples.newPackage(), to: url)
        let manifest =
            try JSONSerialization.jsonObject(with: Data(contentsOf: url.appendingPathComponent(".folio-manifest")))
            as? [String: Any]
        #expect(manifest?["generation"] as? Int == 42)
    }

    @Test(arguments: [-1, Int.min])
    func aNegativeSizeIsCorrupt(size: Int) throws {
        _ = try SavePipeline().savePackage(try Samples.oldPackage(), to: url)
        let manifestURL = url.appendingPathComponent(".folio-manifest")
        var manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
        var files = try #require(manifest["files"] as? [[String: Any]])
        files[0]["size"] = size
        manifest["files"] = files
        try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]).write(to: manifestURL)
        let error = try #require(throws: SaveError.self) { _ = try SavePipeline().readPackage(at: url) }
        #expect(error.code == .corruptPackage)
    }

    @Test(arguments: [
        "00", String(repeating: "0", count: 63), String(repeating: "0", count: 66), String(repeating: "G", count: 64),
        String(repeating: "A", count: 64),
    ])
    func aHashOfTheWrongLengthOrDigitsIsCorrupt(hash: String) throws {
        _ = try SavePipeline().savePackage(try Samples.oldPackage(), to: url)
        let manifestURL = url.appendingPathComponent(".folio-manifest")
        var manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
        var files = try #require(manifest["files"] as? [[String: Any]])
        files[0]["sha256"] = hash
        manifest["files"] = files
        try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]).write(to: manifestURL)
        let error = try #require(throws: SaveError.self) { _ = try SavePipeline().readPackage(at: url) }
        #expect(error.code == .corruptPackage)
    }
}
