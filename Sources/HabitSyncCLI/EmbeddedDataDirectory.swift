import Foundation

/// Where the embedded database lives when neither `--data-dir` nor `HABITSYNC_DATA_DIR`
/// names a folder: `.habitsync` in the checkout the binary was built in, so that
/// `../habitsync/.build/release/habitsync-server tenant list` run from any folder finds the
/// database `scripts/run` serves; a binary outside a checkout uses `./.habitsync`.
enum EmbeddedDataDirectory {
    static let folderName = ".habitsync"

    static func resolve(named: String?, executable: URL, currentDirectory: URL) -> URL {
        if let named {
            return URL(fileURLWithPath: named, relativeTo: URL(fileURLWithPath: currentDirectory.path, isDirectory: true)).standardizedFileURL
        }
        return (checkout(containing: executable) ?? currentDirectory).appendingPathComponent(folderName).standardizedFileURL
    }

    /// The package folder whose `.build` holds `executable` (SwiftPM's `.build/release/…`
    /// and `.build/<triple>/release/…`), if it has a `Package.swift`.
    static func checkout(containing executable: URL) -> URL? {
        var folder = executable.resolvingSymlinksInPath().deletingLastPathComponent()
        while folder.path != "/" && !folder.path.isEmpty {
            if folder.lastPathComponent == ".build" {
                let package = folder.deletingLastPathComponent()
                return FileManager.default.fileExists(atPath: package.appendingPathComponent("Package.swift").path) ? package : nil
            }
            folder = folder.deletingLastPathComponent()
        }
        return nil
    }

    static var executable: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    }
}
