import Foundation
import Migrations
import TestSupport
import Testing

/// The migrations compiled into the binary are the repository's `migrations/` folder, byte for
/// byte: an installed binary migrates exactly what the checkout would.
@Suite struct MigrationBundleTests {
    @Test func theCompiledInMigrationsAreTheFoldersFiles() throws {
        let folder = try MigrationDirectory(url: TestPostgres.migrationsDirectory).files
        let bundled = try MigrationDirectory.bundled().files
        let stale = "the migrations compiled into the binary differ from migrations/; run scripts/bundle-migrations"
        #expect(bundled.map(\.fileName) == folder.map(\.fileName), "\(stale)")
        #expect(bundled.map(\.checksum) == folder.map(\.checksum), "\(stale)")
        let sameFiles = bundled == folder  // their SQL and transaction markers too, unprinted
        #expect(sameFiles, "\(stale)")
    }

    @Test func theCompiledInMigrationsNameTheirSource() throws {
        let bundled = try MigrationDirectory.bundled()
        #expect(bundled.url == nil)
        #expect(bundled.source == "the migrations compiled into this binary")
        #expect(bundled.headVersion == (try MigrationDirectory(url: TestPostgres.migrationsDirectory).headVersion))
    }
}
