// package-manifest: package manifests and entry names from disk, then the recovery of a package.
// The untrusted text of a package's manifest and of its entry names.
// Oracles: `PackagePath(_:)` accepts only names that are safe byte for byte, and gives them back unchanged;
// `PackageManifest(decoding:packageName:)` never traps, accepts only safe paths, re-encodes to a manifest that
// decodes to the same one; `memberURL` never gives a URL outside the package; and a package on disk whose
// committed save is rolled forward from that manifest (`recoverPackage`, run when a package is opened) leaves
// everything outside the package as it was.
import FolioCore
import Foundation

@testable import FolioDocuments

enum Harness {
    static func run(_ input: UnsafeRawBufferPointer) {
        let text = String(decoding: input, as: UTF8.self)
        if let path = try? PackagePath(text) {
            PathChecks.requireSafe(path, "PackagePath(_:)")
            require(
                path.description == text,
                "PackagePath(_:) changed \(text.debugDescription) into \(path.description.debugDescription)")
        }
        guard let manifest = try? PackageManifest(decoding: Data(input), packageName: "Fuzz.folio-pages") else {
            return
        }
        for entry in manifest.files { PathChecks.requireSafe(entry.path, "a manifest's file") }
        for directory in manifest.directories { PathChecks.requireSafe(directory, "a manifest's directory") }
        let encoded = manifest.encoded()
        guard let again = try? PackageManifest(decoding: encoded, packageName: "Fuzz.folio-pages") else {
            oracleFailed("a decoded manifest re-encodes to a manifest that does not decode")
        }
        require(again == manifest && again.encoded() == encoded, "a decoded manifest re-encodes to another manifest")
        recover(manifest)
    }

    /// Lays out a package whose save of `manifest` committed (its staging directory holds every file, with contents
    /// that match), opens it, and checks that nothing outside it moved.
    static func recover(_ listed: PackageManifest) {
        let scratch = ScratchDirectory.fresh("package")
        let outside = scratch.appendingPathComponent("outside.txt")
        let package = scratch.appendingPathComponent("Fuzz.folio-pages", isDirectory: true)
        var manifest = listed
        manifest.files = listed.files.map { entry in
            let contents = Data(entry.path.description.utf8)
            return PackageManifest.Entry(path: entry.path, size: contents.count, hash: ContentHash(hashing: contents))
        }
        let staging = package.appendingPathComponent(
            PackageLayout.stagingName(generation: manifest.generation), isDirectory: true)
        do {
            try Data("outside".utf8).write(to: outside)
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
            try Data("stray".utf8).write(to: package.appendingPathComponent("stray.txt"))
            for entry in manifest.files {
                try Data(entry.path.description.utf8).write(
                    to: staging.appendingPathComponent(PackageLayout.stagedName(for: entry.path)))
            }
            try manifest.encoded().write(to: package.appendingPathComponent(PackageLayout.manifestName))
        } catch {
            fatalError("cannot lay out the package: \(error)")
        }
        let pipeline = SavePipeline()
        let opened = try? pipeline.readPackage(at: package)
        let around = (try? FileManager.default.contentsOfDirectory(atPath: scratch.path))?.sorted() ?? []
        require(
            around == ["Fuzz.folio-pages", "outside.txt"],
            "opening a package changed the directory around it: \(around)")
        require((try? Data(contentsOf: outside)) == Data("outside".utf8), "opening a package changed a file beside it")
        if let opened {
            require(
                opened.filePaths == manifest.files.map(\.path),
                "a recovered package holds \(opened.filePaths), its manifest lists \(manifest.files.map(\.path))")
        }
    }

    static func seeds() -> [[UInt8]] {
        var package = FilePackage()
        try? package.setFile(Data("text".utf8), at: PackagePath("text.txt"))
        try? package.setFile(Data([1, 2]), at: PackagePath("images/a.png"))
        try? package.addDirectory(PackagePath("images/empty"))
        try? package.setFile(Data(), at: PackagePath("é/e\u{301}"))
        let manifests = [
            PackageManifest(package: package, generation: 3).encoded(),
            PackageManifest(package: FilePackage(), generation: 1).encoded(),
        ]
        let paths = ["images/cover.png", "a/b/c", "../x", "a/./b", "x\u{301}/../y", "/abs", "name with spaces"]
        return manifests.map { Array($0) } + paths.map { Array($0.utf8) }
    }
}
