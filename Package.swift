// swift-tools-version:6.2
import PackageDescription

// Strict settings, as Hummingbird builds itself.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "habitsync-server",
    // iOS and watchOS for the device SDK; the server's macOS 15 (`Synchronization`) applies to
    // a macOS app too, since one package has one list.
    platforms: [.macOS(.v15), .iOS(.v17), .watchOS(.v10)],
    products: [
        // What an app adds (docs/client.md): the device SDK and the domain rules it shares
        // with the server. SwiftPM fetches and builds only what these targets use (GRDB),
        // none of the server's dependencies.
        .library(name: "HabitSyncClient", targets: ["HabitSyncClient"]),
        .library(name: "HabitSyncDomain", targets: ["HabitSyncDomain"]),
        .executable(name: "habitsync-device", targets: ["habitsync-device"]),
        .executable(name: "habitsync-server", targets: ["habitsync-server"]),
        .executable(name: "habitsync-bench", targets: ["habitsync-bench"]),
        .executable(name: "habitsync-faults", targets: ["habitsync-faults"]),
        .executable(name: "habitsync-fuzz", targets: ["habitsync-fuzz"]),
    ],
    dependencies: [
        // Traits off: we use neither swift-configuration nor the FullFoundation extras,
        // and each trait adds build time on 2 cores.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // 4.x: jwt-kit 5 needs it; used here for migration checksums.
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        // JWT verification (HS256, ES256, RS256): a well-kept library, not hand-written crypto.
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        // gzip request bodies (zlib through a small wrapper; needs zlib1g-dev).
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        // Tests only: reads the OpenAPI document to check responses against it.
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        // The device SDK's local store; also for tests that alter a device's SQLite file
        // behind the SDK's back.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // Spans (the API Hummingbird already builds on); exported over OTLP/HTTP by swift-otel
        // when the operator turns tracing on (docs/operations.md, "Tracing"). OTLP/HTTP only:
        // the gRPC exporter would add grpc-swift to every build.
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        // APNs over HTTP/2, its connections kept open as Apple asks (docs/operations.md,
        // "Waking iPhones"); both are built already for swift-otel's OTLP/HTTP exporter.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        // The domain rules shared by the server and the device SDK: collections, record
        // validation, the push plan, wire times and dates, LWW keys, derived-state rules, the
        // legacy grammars. Pure Swift on Foundation, no other dependency.
        .target(name: "HabitSyncDomain", path: "Domain/Sources/HabitSyncDomain", swiftSettings: strictSettings),
        // The device SDK: a local SQLite store with sync status on every record, the outbox,
        // the sync engine. The domain rules and GRDB only: nothing of the server's.
        .target(
            name: "HabitSyncClient",
            dependencies: ["HabitSyncDomain", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Client/Sources/HabitSyncClient",
            swiftSettings: strictSettings
        ),
        // A terminal device on the SDK: two terminals can be two phones (README).
        .executableTarget(
            name: "habitsync-device",
            dependencies: ["HabitSyncClient", "HabitSyncDomain"],
            path: "Client/Sources/habitsync-device",
            swiftSettings: strictSettings
        ),
        // libpq's C API, and nothing else.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // The PostgreSQL client: connections, pool, queries, rows, errors. Knows nothing about habits.
        .target(
            name: "LibPQClient",
            dependencies: [
                "CLibPQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSettings
        ),
        // A private PostgreSQL cluster run from the installed server binaries.
        .target(
            name: "EmbeddedPostgres",
            dependencies: [
                .product(name: "Logging", package: "swift-log")
            ],
            swiftSettings: strictSettings
        ),
        // Versioned SQL files, checksums, the advisory lock, the history table.
        .target(
            name: "Migrations",
            dependencies: [
                "LibPQClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // One guarded GET through libcurl (no redirects, no proxies, size and time limits, no
        // private addresses), for an identity provider's keys. Knows nothing about tokens.
        .target(
            name: "CGuardedFetch",
            linkerSettings: [.linkedLibrary("curl")]
        ),
        .target(
            name: "GuardedFetch",
            dependencies: [
                "CGuardedFetch",
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // Access tokens: tenant keys, verification and minting. No I/O.
        .target(
            name: "HabitSyncAuth",
            dependencies: [
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // The store: turns requests (pushes, pulls, accounts, tenants) into set-based SQL.
        .target(
            name: "HabitSyncStore",
            dependencies: [
                "LibPQClient",
                "HabitSyncAuth",
                "HabitSyncDomain",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSettings
        ),
        // HTTP: decode, authorise, call the store, encode. Health, readiness, metrics.
        .target(
            name: "HabitSyncServer",
            dependencies: [
                "LibPQClient",
                "Migrations",
                "HabitSyncAuth",
                "GuardedFetch",
                "HabitSyncDomain",
                "HabitSyncStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            resources: [.embedInCode("Resources/openapi.yaml")],
            swiftSettings: strictSettings
        ),
        // The command line: parse arguments, resolve configuration, call the layers.
        .target(
            name: "HabitSyncCLI",
            dependencies: [
                "LibPQClient",
                "HabitSyncAuth",
                "HabitSyncStore",
                "Migrations",
                "EmbeddedPostgres",
                "HabitSyncServer",
                "GuardedFetch",
                "HabitSyncDomain",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // What the benchmark and the fault suite share: a database of their own, server child
        // processes, devices speaking HTTP.
        .target(
            name: "ServerHarness",
            dependencies: [
                "LibPQClient", "EmbeddedPostgres", "Migrations", "HabitSyncAuth", "HabitSyncStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // The fault scenarios (kill -9, PostgreSQL outage, SIGTERM, two replicas), run by
        // `habitsync-faults` and, in a short form, by the test suite.
        .target(
            name: "FaultSuite",
            dependencies: ["ServerHarness", "LibPQClient", "HabitSyncStore", "HabitSyncDomain"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "habitsync-faults",
            dependencies: [
                "FaultSuite", "ServerHarness",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/HabitSyncFaults",
            swiftSettings: strictSettings
        ),
        // A deterministic random source for property tests and the fuzzer; no dependencies,
        // so the pure domain tests do not link the server stack for it.
        .target(name: "SeededRandom", swiftSettings: strictSettings),
        // The end-to-end fuzzer: random hostile batches, queries and lifecycle operations
        // against a real server process, with invariants checked after every step. Run by
        // `habitsync-fuzz` and, in a short form, by the test suite.
        .target(
            name: "FuzzSuite",
            dependencies: ["ServerHarness", "LibPQClient", "HabitSyncStore", "HabitSyncDomain", "SeededRandom"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "habitsync-fuzz",
            dependencies: [
                "FuzzSuite", "ServerHarness",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/HabitSyncFuzz",
            swiftSettings: strictSettings
        ),
        // The side-by-side benchmark (BENCHMARKS.md): raw libpq ceiling vs the server end to end.
        .executableTarget(
            name: "habitsync-bench",
            dependencies: [
                "ServerHarness", "LibPQClient", "HabitSyncStore", "HabitSyncDomain", "SeededRandom",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/HabitSyncBench",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "habitsync-server",
            dependencies: ["HabitSyncCLI"],
            swiftSettings: strictSettings
        ),
        // Shared test helpers: a throwaway PostgreSQL cluster, fresh migrated databases, HTTP.
        .target(
            name: "TestSupport",
            dependencies: [
                "ServerHarness",
                "LibPQClient",
                "Migrations",
                "EmbeddedPostgres",
                "HabitSyncServer",
                "HabitSyncStore",
                "HabitSyncAuth",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HabitSyncClientTests",
            dependencies: ["HabitSyncClient", "HabitSyncDomain"],
            path: "Client/Tests/HabitSyncClientTests",
            swiftSettings: strictSettings
        ),
        // The SDK added to an app as docs/client.md says, built and synced against the server.
        .testTarget(
            name: "AdoptionTests",
            dependencies: ["TestSupport", "ServerHarness"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LibPQClientTests",
            dependencies: ["LibPQClient", "TestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MigrationsTests",
            dependencies: ["Migrations", "LibPQClient", "TestSupport", "ServerHarness"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SchemaTests",
            dependencies: ["LibPQClient", "TestSupport", "HabitSyncDomain", "HabitSyncStore", "HabitSyncAuth", "SeededRandom"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "DomainTests",
            dependencies: ["HabitSyncDomain", "SeededRandom"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "AuthTests",
            dependencies: [
                "HabitSyncAuth", "HabitSyncStore", "HabitSyncServer", "HabitSyncCLI", "habitsync-server", "LibPQClient", "TestSupport",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // What the sync suites share: a migrated database with a tenant and a server over it,
        // devices speaking the wire format, SDK devices on the event stream.
        .target(
            name: "SyncTestSupport",
            dependencies: [
                "HabitSyncServer", "HabitSyncStore", "HabitSyncAuth", "HabitSyncDomain", "HabitSyncClient", "LibPQClient", "ServerHarness", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/SyncTestSupport",
            swiftSettings: strictSettings
        ),
        // The protocol end to end: push, pull, merge rules, derived state, accounts, realtime,
        // the SDK. `scripts/test` runs it a second time through PgBouncer, `scripts/test-citus`
        // on Citus.
        .testTarget(
            name: "SyncTests",
            dependencies: [
                "SyncTestSupport",
                "HabitSyncServer", "HabitSyncStore", "HabitSyncAuth", "HabitSyncDomain", "LibPQClient", "ServerHarness", "TestSupport", "SeededRandom", "GuardedFetch",
                "HabitSyncClient",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // What only a Citus cluster shows (placement, router statements, a stopped node); skipped
        // unless `scripts/test-citus` runs the suite on one.
        .testTarget(
            name: "CitusTests",
            dependencies: [
                "SyncTestSupport", "HabitSyncServer", "HabitSyncStore", "HabitSyncAuth", "HabitSyncDomain", "LibPQClient", "ServerHarness",
                "TestSupport", "EmbeddedPostgres", "HabitSyncClient",
            ],
            swiftSettings: strictSettings
        ),
        // A transaction pooler in front of the requests: roles, settings and statements must not
        // leak between the clients of one server connection.
        .testTarget(
            name: "PgBouncerTests",
            dependencies: ["SyncTestSupport", "HabitSyncServer", "LibPQClient", "ServerHarness", "TestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "BenchTests",
            dependencies: ["habitsync-bench", "habitsync-server", "TestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FuzzTests",
            dependencies: ["FuzzSuite", "habitsync-server", "TestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FaultTests",
            dependencies: ["FaultSuite", "habitsync-server", "habitsync-faults", "TestSupport", "LibPQClient"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ServerTests",
            dependencies: [
                "HabitSyncServer", "HabitSyncCLI", "habitsync-server", "LibPQClient", "ServerHarness", "TestSupport", "EmbeddedPostgres", "GuardedFetch",
                "HabitSyncAuth", "HabitSyncDomain", "HabitSyncStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
    ]
)
