// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Folio",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        // What an app imports: documents, models, saving, conflicts, the log and sync (it re-exports the layers below).
        .library(name: "Folio", targets: ["Folio"]),
        // The sync server, for a program that embeds it rather than running `folio serve`.
        .library(name: "FolioServer", targets: ["FolioServer"]),
        // Multi-device scenarios and their conflict-inspection reports, for an app's own tests and CI.
        .library(name: "FolioSimulator", targets: ["FolioSimulator"]),
        .library(name: "FolioReports", targets: ["FolioReports"]),
        // Test helpers: named devices, manual clocks, seeded identifiers and the test doubles.
        .library(name: "FolioTesting", targets: ["FolioTesting"]),
        .executable(name: "folio", targets: ["folio"]),
    ],
    traits: [
        // `folio replay` and `folio fuzz`: the simulator, with its fault-injecting disks and networks. On by default;
        // a server's build leaves it out (`swift build -c release --product folio --disable-default-traits`), so the
        // binary that serves users links no fault injector.
        .trait(
            name: "Simulator",
            description: "The folio replay and fuzz commands, with the simulator and its fault injectors."),
        .default(enabledTraits: ["Simulator"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // `folio serve` and its client: HTTP and WebSocket, logs, metrics, graceful shutdown.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Tokens the app's own backend signs (JWT, EdDSA and HS256), which `folio serve` checks.
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        // `folio serve --postgres`: the server's logs and accounts on PostgreSQL.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // `swift package generate-documentation` (the DocC catalog in Sources/Folio/Folio.docc); no target uses it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Values only: identities, version vectors, changes, their codec and the causal graph. No I/O.
        .target(
            name: "FolioCore",
            dependencies: ["CZlib", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // The file system behind a protocol: the real one (POSIX, never following a link) and its typed errors. The file
        // I/O of documents, the sync folder, store snapshots, report copies and the simulator goes through it, so that
        // faults can be injected there.
        .target(name: "FolioFiles", dependencies: ["FolioCore"]),
        // The system's zlib, for compressing what the store keeps at rest.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        // Process-wide settings of the system's SQLite that Swift cannot call.
        .systemLibrary(name: "CSQLiteConfig", path: "Sources/CSQLiteConfig", providers: [.apt(["libsqlite3-dev"])]),
        // The change log on SQLite. The only target that imports GRDB.
        .target(
            name: "FolioStore",
            dependencies: [
                "FolioCore", "FolioFiles", "CZlib", "CSQLiteConfig",
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // Merge algorithms: line diffs, diff3 over lines, field-by-field merges. No I/O.
        .target(
            name: "FolioMerge",
            dependencies: ["FolioCore", .product(name: "HeapModule", package: "swift-collections")]
        ),
        // The conflict engine, sans-I/O: heads, history and policy in; versions, settlements and the loss ledger out.
        .target(name: "FolioConflicts", dependencies: ["FolioCore", "FolioMerge"]),
        // Built-in document models: text (flat), records (flat), pages (a package of text and images).
        .target(name: "FolioModels", dependencies: ["FolioCore", "FolioMerge"]),
        // Documents on disk: the library, documents and the crash-safe save pipeline (flat files and packages).
        .target(
            name: "FolioDocuments",
            dependencies: [
                "FolioCore", "FolioFiles", "FolioStore", "FolioMerge", "FolioConflicts",
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]),
        // Conflict-inspection reports: one value captured from documents, rendered as JSON, Markdown and HTML.
        .target(
            name: "FolioReports",
            dependencies: ["FolioCore", "FolioFiles", "FolioStore", "FolioModels", "FolioConflicts", "FolioDocuments"]),
        // What an app imports: documents, models, saving, conflicts and sync in one module, and what joins documents
        // to sync (`DocumentLibrary.sync(through:)`).
        .target(
            name: "Folio",
            dependencies: [
                "FolioCore", "FolioFiles", "FolioStore", "FolioMerge", "FolioConflicts", "FolioModels",
                "FolioDocuments",
                "FolioSync", "FolioClient",
            ]
        ),
        // Scenario files (docs/scenarios.md) read strictly into values and written back canonically, and the simulator
        // that runs them on real libraries with injected clocks, file I/O and network.
        .target(
            name: "FolioSimulator",
            dependencies: [
                "Folio", "FolioCore", "FolioFiles", "FolioStore", "FolioModels", "FolioConflicts", "FolioDocuments",
                "FolioSync", "FolioReports", "FolioTestDoubles",
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // Sync: the protocol as a sans-I/O session, its driver, and the shared-folder transport.
        .target(name: "FolioSync", dependencies: ["FolioCore", "FolioFiles", "FolioStore"]),
        // The client of a Folio server (`folio serve`): a WebSocket transport for one sync, and a live connection that
        // keeps a store in sync, reconnecting with backoff.
        .target(
            name: "FolioClient",
            dependencies: [
                "FolioCore", "FolioStore", "FolioSync",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The sync server (`folio serve`): accounts and tokens, one log per library behind `ServerLog`, WebSocket
        // sessions, live push, health and metrics.
        .target(
            name: "FolioServer",
            dependencies: [
                "FolioCore", "FolioFiles", "FolioStore", "FolioSync",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ]
        ),
        // The server's logs and accounts on PostgreSQL (`folio serve --postgres URL`): several server processes share
        // one database. Named, forward-only schema migrations; a bounded connection pool.
        .target(
            name: "FolioPostgres",
            dependencies: [
                "FolioCore", "FolioStore", "FolioSync", "FolioServer",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Test doubles and test support, for Folio's tests and for apps that test with Folio: replayable seeds,
        // property checks (with swift-testing), temporary directories, devices named by tests, and the doubles.
        .target(name: "FolioTesting", dependencies: ["FolioCore", "FolioStore", "FolioMerge", "FolioTestDoubles"]),
        // Forks and executes child processes on one thread that never exits, the child asking for SIGKILL when its
        // parent dies (Foundation's `Process.run()` crashes on Linux, swift-corelibs-foundation#5472, and leaves
        // its children running).
        .target(name: "CChildProcess", cSettings: [.define("_GNU_SOURCE")]),
        // Child processes of tests, benchmarks and test doubles that die with the process that started them:
        // `ChildProcess` over CChildProcess, and `OutputCollector`, which reads their pipes as they come.
        .target(name: "FolioChildProcess", dependencies: ["CChildProcess"]),
        // The test doubles, without the Testing library, so that the simulator (and the `folio` tool) can use them:
        // a fault-injecting file system, a file system that models power cuts, an in-memory network with faults, and
        // logs and stores held as values. Part of the FolioTesting product.
        .target(
            name: "FolioTestDoubles",
            dependencies: [
                "FolioCore", "FolioFiles", "FolioStore", "FolioSync", "FolioMerge", "FolioModels", "FolioConflicts",
                "CZlib",
            ]),
        .executableTarget(
            name: "folio",
            dependencies: [
                "FolioCore", "FolioFiles", "FolioStore", "FolioSync", "FolioDocuments", "FolioReports", "FolioServer",
                "FolioPostgres",
                // `folio serve admin`: the loopback test of cleartext addresses, as devices apply it.
                "FolioClient",
                .target(name: "FolioSimulator", condition: .when(traits: ["Simulator"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // Examples: small programs an app developer starts from (README.md shows the first verbatim).
        .executableTarget(name: "NotesExample", dependencies: ["Folio"], path: "Examples/Notes"),
        .executableTarget(name: "ChecklistExample", dependencies: ["Folio"], path: "Examples/Checklist"),
        .executableTarget(name: "LiveSyncExample", dependencies: ["Folio"], path: "Examples/LiveSync"),
        .executableTarget(name: "CoEditingExample", dependencies: ["Folio"], path: "Examples/CoEditing"),
        .executableTarget(
            name: "FolioBench",
            dependencies: [
                "FolioCore", "FolioStore", "FolioConflicts", "FolioDocuments", "FolioModels", "FolioSimulator",
                "FolioTestDoubles", "FolioChildProcess",
                // `serve`: libraries syncing live with a `folio serve` process.
                "Folio", "FolioClient",
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                // `serve-load`: raw WebSocket connections, and the anchor's inserts into PostgreSQL.
                "FolioPostgres",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // `serve-load --tokens app`: tokens signed as an app's backend signs them (Ed25519).
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tools/bench/FolioBench"
        ),
        // A deadline for the whole test process (FOLIO_TEST_DEADLINE): past it, where every thread stood, then exit.
        .target(name: "FolioTestWatchdog", path: "Tests/FolioTestWatchdog"),
        // A pool of threads of its own for the tests that compute or block (the `.workPool` trait), off the cooperative
        // pool that the tests waiting on time need.
        .target(name: "FolioTestWorkPool", path: "Tests/FolioTestWorkPool"),
        // Runs the built `folio` tool, for the tests of this package that drive it as a user would.
        .target(
            name: "FolioToolRunner", dependencies: ["FolioChildProcess", "FolioTestWatchdog"],
            path: "Tests/FolioToolRunner"),
        // A child process for FolioChildProcessTests that starts a grandchild through FolioChildProcess.
        .executableTarget(
            name: "FolioChildProcessHelper", dependencies: ["FolioChildProcess"], path: "Tests/FolioChildProcessHelper"),
        // A SQLite VFS for power-loss tests: keeps only what was synced (plus a seeded, torn subset of the rest).
        .target(
            name: "CSQLitePowerLoss", path: "Tests/CSQLitePowerLoss",
            cSettings: [.define("_GNU_SOURCE")], linkerSettings: [.linkedLibrary("sqlite3")]),
        .testTarget(name: "FolioCoreTests", dependencies: ["FolioTestWorkPool", "FolioTesting", "FolioCore"]),
        .testTarget(
            name: "FolioStoreTests",
            dependencies: [
                "FolioTestWorkPool",
                "FolioTesting", "FolioCore", "FolioFiles", "FolioStore", "folio", "FolioToolRunner", "CSQLitePowerLoss",
                "FolioChildProcess",
            ],
            // Store files of older builds, read from the source tree (#filePath), not as resources.
            exclude: ["Fixtures"]),
        .testTarget(
            name: "FolioModelsTests",
            dependencies: ["FolioTestWorkPool", "FolioTesting", "FolioCore", "FolioModels", "FolioChildProcess"]),
        .testTarget(
            name: "FolioMergeTests",
            dependencies: ["FolioTestWorkPool", "FolioTesting", "FolioCore", "FolioMerge", "FolioModels"]),
        .testTarget(
            name: "FolioConflictsTests",
            dependencies: ["FolioTestWorkPool", "FolioTesting", "FolioCore", "FolioConflicts"]),
        .testTarget(
            name: "FolioDocumentsTests",
            dependencies: [
                "FolioTestWorkPool",
                "FolioTesting", "FolioCore", "FolioStore", "FolioConflicts", "FolioDocuments", "FolioModels",
                "FolioSync", "Folio", "CSQLitePowerLoss",
                // The scenarios' stores, whose changes ChangeRunCorpusTests round-trips through the run codec.
                "FolioSimulator",
            ]),
        .testTarget(
            name: "FolioSimulatorTests",
            dependencies: [
                "FolioTestWorkPool",
                "FolioTesting", "FolioCore", "FolioFiles", "FolioModels", "FolioReports", "FolioSimulator", "folio",
                "FolioToolRunner", "FolioChildProcess",
            ],
            // The golden reports and the fuzz findings are read from the source tree (#filePath), not as resources.
            exclude: ["Golden", "FuzzFindings"]),
        .testTarget(
            name: "FolioReportsTests",
            dependencies: [
                "FolioTestWorkPool",
                "FolioTesting", "FolioCore", "FolioModels", "FolioConflicts", "FolioDocuments", "FolioReports",
            ]),
        .testTarget(
            name: "FolioServerTests",
            dependencies: [
                "FolioTestWorkPool",
                "FolioTesting", "FolioCore", "FolioStore", "FolioSync", "FolioClient", "FolioServer", "Folio",
                "FolioModels", "folio", "FolioToolRunner", "LiveSyncExample", "CoEditingExample",
                .product(name: "WSClient", package: "swift-websocket"),
                // RawClient's connections each on an event loop of their own.
                .product(name: "NIOPosix", package: "swift-nio"),
                // App tokens signed as an app's backend would.
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                // Account databases changed behind the server's back.
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        .testTarget(
            name: "FolioPostgresTests",
            dependencies: [
                "FolioTestWorkPool",
                "FolioTesting", "FolioCore", "FolioStore", "FolioSync", "FolioServer", "FolioPostgres", "FolioClient",
                "Folio", "FolioModels", "folio", "FolioToolRunner", "FolioChildProcess",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]),
        .testTarget(
            name: "FolioChildProcessTests",
            dependencies: ["FolioTestWorkPool", "FolioChildProcess", "FolioChildProcessHelper"]),
        .testTarget(
            name: "FolioSyncTests",
            dependencies: [
                "FolioTestWorkPool",
                "FolioTesting", "FolioCore", "FolioFiles", "FolioStore", "FolioSync", "folio", "FolioToolRunner",
            ]),
    ]
)
