// swift-tools-version:6.2
import PackageDescription

// The domain rules shared by the server and the device SDK: collections, record validation,
// the push plan, wire times and dates, LWW keys, derived-state rules, the legacy grammars.
// Pure Swift on Foundation, no other dependency, so a device app adding the SDK gets none of
// the server's.
let package = Package(
    name: "habitsync-domain",
    platforms: [.macOS(.v14), .iOS(.v17), .watchOS(.v10)],
    products: [
        .library(name: "HabitSyncDomain", targets: ["HabitSyncDomain"]),
    ],
    targets: [
        .target(
            name: "HabitSyncDomain",
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        ),
    ]
)
