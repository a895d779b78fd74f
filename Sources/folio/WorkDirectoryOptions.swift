import ArgumentParser
import Foundation

/// The help a scenario-running command (`replay`, `fuzz`) gives for `--work-dir`.
protocol WorkDirectoryHelp {
    /// The help of `--work-dir`.
    static var workDirectoryHelp: ArgumentHelp { get }
}

/// `--work-dir DIR` of `replay` and `fuzz`: where the simulated devices' libraries live while scenarios run.
struct WorkDirectoryOptions<Help: WorkDirectoryHelp>: ParsableArguments {
    @Option(help: Help.workDirectoryHelp)
    var workDir: String?

    /// The directory, made if missing (see ``WorkDirectory/prepare(_:)``); `nil` without `--work-dir`.
    func prepare() throws -> URL? {
        try workDir.map { try WorkDirectory.prepare($0) }
    }
}
