import EmbeddedPostgres
import Foundation
import TestSupport

/// A test's folder holding a server's embedded cluster (`.habitsync/postgres`), and what a
/// failed expectation may leave in it: the cluster stopped, the folder removed.
struct EmbeddedTestFolder {
    let folder: URL
    var cluster: URL { folder.appendingPathComponent(".habitsync/postgres") }

    init(_ prefix: String) throws { folder = try makeTemporaryDirectory(prefix) }

    var clusterIsRunning: Bool { EmbeddedPostgres.runningPort(ofCluster: cluster) != nil }

    func cleanUp() {
        if clusterIsRunning { try? EmbeddedPostgres(configuration: .init(directory: cluster), logger: TestPostgres.logger).stop(mode: .immediate) }
        try? FileManager.default.removeItem(at: folder)
    }
}
