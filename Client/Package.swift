// swift-tools-version:6.2
import PackageDescription

// The device half of habitsync: a local SQLite store with sync status on every record, and
// (as issue 12 lands) the sync engine. It depends on the shared domain rules and GRDB only:
// no libpq, no Hummingbird, nothing of the server's.
let package = Package(
    name: "habitsync-client",
    platforms: [.macOS(.v14), .iOS(.v17), .watchOS(.v10)],
    products: [
        .library(name: "HabitSyncClient", targets: ["HabitSyncClient"]),
        .executable(name: "habitsync-device", targets: ["habitsync-device"]),
    ],
    dependencies: [
        .package(path: "../Domain"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .target(
            name: "HabitSyncClient",
            dependencies: [
                .product(name: "HabitSyncDomain", package: "Domain"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        ),
        // A terminal device on the SDK: two terminals can be two phones.
        .executableTarget(
            name: "habitsync-device",
            dependencies: ["HabitSyncClient", .product(name: "HabitSyncDomain", package: "Domain")]
        ),
        .testTarget(
            name: "HabitSyncClientTests",
            dependencies: ["HabitSyncClient", .product(name: "HabitSyncDomain", package: "Domain")]
        ),
    ]
)
