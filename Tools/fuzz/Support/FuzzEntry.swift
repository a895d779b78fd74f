// The libFuzzer entry points every harness shares. Each harness file defines `enum Harness` with
// `static func run(_ input: UnsafeRawBufferPointer)` (one execution: return normally, or trap when an oracle fails)
// and `static func seeds() -> [[UInt8]]` (the seed corpus, made with the real encoders).
import Foundation

/// libFuzzer's entry point: runs the harness once on `size` bytes at `data`.
@_cdecl("LLVMFuzzerTestOneInput")
public func folioFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    Harness.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// Writes the seed corpus and exits when `FOLIO_FUZZ_WRITE_SEEDS` names a directory; otherwise lets libFuzzer run.
@_cdecl("LLVMFuzzerInitialize")
public func folioFuzzInitialize(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    guard let directory = ProcessInfo.processInfo.environment["FOLIO_FUZZ_WRITE_SEEDS"] else { return 0 }
    let seeds = Harness.seeds()
    for (index, seed) in seeds.enumerated() {
        let url = URL(fileURLWithPath: directory).appendingPathComponent(String(format: "seed-%03d", index))
        do {
            try Data(seed).write(to: url)
        } catch {
            FileHandle.standardError.write(Data("cannot write \(url.path): \(error)\n".utf8))
            exit(2)
        }
    }
    print("wrote \(seeds.count) seeds to \(directory)")
    exit(0)
}

/// Stops the run when an oracle fails: the fuzzer reports the input as a crash, with this message above the stack.
func require(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID,
    line: UInt = #line
) {
    if !condition() { oracleFailed(message(), file: file, line: line) }
}

func oracleFailed(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError("fuzz oracle: \(message)", file: file, line: line)
}
