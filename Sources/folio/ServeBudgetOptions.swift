import ArgumentParser
import FolioServer

/// `folio serve`'s bounds on what members of a library can make the server hold: memory, documents and bytes.
struct ServeBudgetOptions: ParsableArguments {
    @Option(
        help: """
            Bytes of memory the server holds for its clients at once (messages read and not yet stored, sessions, \
            queued frames); while they are spent it reads no more changes and refuses new sessions (1013).
            """)
    var memoryBudget = ServerLimits().memoryBudget

    @Option(help: "Documents a library may hold; a hello announcing more, or changes creating more, are refused.")
    var documentsPerLibrary = ServerLimits().documentsPerLibrary

    @Option(help: "Bytes a library's log may take on disk; changes arriving while it is larger are refused (4413).")
    var libraryQuota = ServerLimits().libraryQuota

    func validate() throws {
        guard (1 << 20...1 << 40).contains(memoryBudget) else {
            throw ValidationError("--memory-budget must be within 1 MiB...1 TiB (\(1 << 20)...\(1 << 40) bytes)")
        }
        guard (1...10_000_000).contains(documentsPerLibrary) else {
            throw ValidationError("--documents-per-library must be within 1...10000000")
        }
        guard (1 << 20...1 << 50).contains(libraryQuota) else {
            throw ValidationError("--library-quota must be within 1 MiB...1 PiB (\(1 << 20)...\(1 << 50) bytes)")
        }
    }

    /// `limits` with these bounds.
    func applied(to limits: ServerLimits) -> ServerLimits {
        var limits = limits
        limits.memoryBudget = memoryBudget
        limits.documentsPerLibrary = documentsPerLibrary
        limits.libraryQuota = libraryQuota
        return limits
    }
}
