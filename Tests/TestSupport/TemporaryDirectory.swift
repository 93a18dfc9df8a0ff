import Foundation

/// A fresh folder under the temporary directory, for migration files and embedded clusters.
public func makeTemporaryDirectory(_ prefix: String = "habitsync-test") throws -> URL {
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
