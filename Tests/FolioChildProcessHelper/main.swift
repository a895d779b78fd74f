// A process for FolioChildProcessTests: starts `sleep 600` through `ChildProcess`, prints its process identifier
// on a line of its own, then ends as its first argument says:
//
// - `wait`: waits forever, for the test to kill it (SIGKILL);
// - `crash-in-thread`: a thread other than the main one dies of SIGSEGV.
//
// The grandchild must die with it either way.

import FolioChildProcess
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

let mode = CommandLine.arguments.dropFirst().first ?? "wait"
let grandchild: ChildProcess
do {
    grandchild = try ChildProcess.start(
        "sleep", arguments: ["600"], standardInput: .null, standardOutput: .null, standardError: .null)
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}
let line = "\(grandchild.pid)\n"
_ = line.withCString { write(1, $0, strlen($0)) }

switch mode {
case "crash-in-thread":
    Thread.detachNewThread {
        // The default action of SIGSEGV, as for a crash (the test turns Swift's backtracer off).
        signal(SIGSEGV, SIG_DFL)
        pthread_kill(pthread_self(), SIGSEGV)
    }
    while true { sleep(60) }
default:
    while true { sleep(60) }
}
