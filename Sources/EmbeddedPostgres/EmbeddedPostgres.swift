import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// A private PostgreSQL cluster in a folder of its own (by default `./.habitsync/postgres`),
/// created on first use with the installed server binaries, listening on a loopback port only,
/// and stopped again by whoever started it.
///
/// PostgreSQL refuses to run as root, so when this process is root the cluster belongs to, and
/// runs as, the unprivileged `postgres` user.
public final class EmbeddedPostgres: Sendable {
    public struct Configuration: Sendable {
        /// The cluster's folder: `data/` (PGDATA), `run/` (socket), the superuser password.
        public var directory: URL
        public var databaseName: String
        public var superuser: String
        /// Off for throwaway test clusters: no fsync, nothing survives a crash, much faster.
        public var durable: Bool
        /// The OS user that owns and runs the cluster when this process is root.
        public var osUserWhenRoot: String
        public var maxConnections: Int

        public init(directory: URL, databaseName: String = "habitsync", superuser: String = "habitsync", durable: Bool = true, osUserWhenRoot: String = "postgres", maxConnections: Int = 200) {
            self.directory = directory
            self.maxConnections = maxConnections
            self.databaseName = databaseName
            self.superuser = superuser
            self.durable = durable
            self.osUserWhenRoot = osUserWhenRoot
        }
    }

    public let configuration: Configuration
    public let binaries: PostgresBinaries
    private let logger: Logger

    private var dataDirectory: URL { configuration.directory.appendingPathComponent("data") }
    private var socketDirectory: URL { configuration.directory.appendingPathComponent("run") }
    private var passwordFile: URL { configuration.directory.appendingPathComponent("superuser.password") }
    private var logFile: URL { configuration.directory.appendingPathComponent("postgres.log") }

    public init(configuration: Configuration, logger: Logger) throws {
        self.configuration = configuration
        self.binaries = try PostgresBinaries.locate()
        self.logger = logger
    }

    /// A running cluster: how to connect, and how this process found it (`how`: it keeps, and
    /// stops, one it started or adopted).
    public struct Running: Sendable {
        public let connectionString: String
        public let port: Int
        public let superuser: String
        public let password: String
        /// What this process found: `.started`, `.adopted` (left running by a process that is
        /// gone), or `.attached` to one another live process keeps.
        public let how: HowFound

        public enum HowFound: Sendable, Equatable {
            case started
            case adopted
            case attached(keeper: ClusterKeeper)
        }

        /// The same server and credentials, another database.
        public func connectionString(database: String) -> String {
            "host=127.0.0.1 port=\(port) user=\(superuser) password=\(password) dbname='\(database.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'"))'"
        }
    }

    /// Creates the cluster if needed and starts it, or attaches to it when another process of
    /// ours already runs it. `port` pins the port (a restart that clients must find again);
    /// by default a free loopback port is chosen.
    public func start(port requestedPort: Int? = nil) throws -> Running {
        try prepareDirectories()
        if !FileManager.default.fileExists(atPath: dataDirectory.appendingPathComponent("PG_VERSION").path) {
            try initialise()
        }
        let password = try String(contentsOf: passwordFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        if let port = runningPort() {
            let how: Running.HowFound
            if case .keptBy(let keeper) = use() {
                how = .attached(keeper: keeper)
            } else {
                // Its keeper is gone (killed, crashed): this process takes its place, and stops
                // it when it is done (`release`).
                try ClusterKeeper.current?.record(in: configuration.directory)
                how = .adopted
            }
            return Running(
                connectionString: connectionString(port: port, password: password, database: configuration.databaseName), port: port,
                superuser: configuration.superuser, password: password, how: how)
        }
        let port = try requestedPort ?? Self.freeLoopbackPort()
        try writeServerSettings(port: port)
        logger.info("starting the embedded PostgreSQL", metadata: ["directory": "\(configuration.directory.path)", "port": "\(port)"])
        try run(binaries.path("pg_ctl"), ["-D", dataDirectory.path, "-l", logFile.path, "-w", "-t", "120", "start"], asClusterOwner: true)
        try ClusterKeeper.current?.record(in: configuration.directory)
        try ensureDatabase(port: port, password: password)
        return Running(
            connectionString: connectionString(port: port, password: password, database: configuration.databaseName), port: port, superuser: configuration.superuser,
            password: password, how: .started)
    }

    public enum StopMode: String, Sendable {
        /// Disconnect sessions, shut down cleanly.
        case fast
        /// Kill everything at once, as a crash would (test clusters at process exit).
        case immediate
    }

    /// Stops the cluster, whoever keeps it.
    public func stop(mode: StopMode = .fast) {
        guard runningPort() != nil else { return }
        do {
            try run(binaries.path("pg_ctl"), ["-D", dataDirectory.path, "-m", mode.rawValue, "-w", "-t", "60", "stop"], asClusterOwner: true)
            ClusterKeeper.clear(in: configuration.directory)
            logger.info("stopped the embedded PostgreSQL")
        } catch {
            logger.warning("could not stop the embedded PostgreSQL", metadata: ["error": "\(error)"])
        }
    }

    /// What a process that used the cluster does when it is done: stops it if this process
    /// keeps it, or its keeper is gone; a cluster another live process keeps is left to it.
    public func release() {
        guard runningPort() != nil else { return }
        if case .keptBy = use() { return }
        stop()
    }

    /// Who uses a running cluster.
    public enum Use: Sendable, Equatable {
        /// Another live process keeps it (started or adopted it), and stops it when it ends.
        case keptBy(ClusterKeeper)
        /// Nobody else: this process keeps it, or it was left running by a process that is
        /// gone. Anyone may stop it.
        case orphaned
    }

    /// Who uses the cluster, besides this process.
    public func use() -> Use {
        if let keeper = ClusterKeeper.recorded(in: configuration.directory), keeper.isAlive, keeper != ClusterKeeper.current {
            return .keptBy(keeper)
        }
        return .orphaned
    }

    /// The port of the cluster's running postmaster, if one runs (from `postmaster.pid`).
    public func runningPort() -> Int? {
        Self.runningPort(ofCluster: configuration.directory)
    }

    public static func runningPort(ofCluster directory: URL) -> Int? {
        let pidFile = directory.appendingPathComponent("data/postmaster.pid")
        guard let text = try? String(contentsOf: pidFile, encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count > 3, let pid = Int32(lines[0]), let port = Int(lines[3]) else { return nil }
        guard kill(pid, 0) == 0 || errno == EPERM else { return nil }
        return port
    }

    // MARK: - Finding and removing clusters

    /// The folder the system keeps relocated clusters in (`reachableDirectory`).
    public static let systemRoot = URL(fileURLWithPath: "/var/lib/habitsync/clusters")

    /// Whether `directory` holds a cluster made by this type: its `data/PG_VERSION` and its
    /// superuser password file.
    public static func isCluster(_ directory: URL) -> Bool {
        let fileManager = FileManager.default
        return fileManager.fileExists(atPath: directory.appendingPathComponent("data/PG_VERSION").path)
            && fileManager.fileExists(atPath: directory.appendingPathComponent("superuser.password").path)
    }

    /// Notes, in the cluster's folder, which data directory it serves: a relocated cluster's
    /// folder name is only a hash of that path.
    public static func recordRequestedDirectory(_ requested: URL, of directory: URL) throws {
        try (requested.path + "\n").write(to: directory.appendingPathComponent("requested-directory"), atomically: true, encoding: .utf8)
    }

    public static func requestedDirectory(of directory: URL) -> String? {
        (try? String(contentsOf: directory.appendingPathComponent("requested-directory"), encoding: .utf8))
            .map { $0.trimmingCharacters(in: .newlines) }
    }

    /// The clusters in the system folder.
    public static func relocatedClusters(under root: URL = systemRoot) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return names.sorted().map { root.appendingPathComponent($0) }.filter(isCluster)
    }

    /// Stops the cluster unless another live process keeps it (with `force`, even then,
    /// disconnecting it). Refuses a folder that is not a cluster; `outcome` ends a refusal's
    /// message (what was left undone). Returns whether it was running.
    @discardableResult
    public func stopUnlessKept(force: Bool = false, outcome: String) throws -> Bool {
        let directory = configuration.directory.path
        guard Self.isCluster(configuration.directory) else {
            throw EmbeddedPostgresError("\(directory) is not an embedded habitsync database (no data/PG_VERSION and superuser.password); \(outcome)")
        }
        guard let port = runningPort() else { return false }
        if !force, case .keptBy(let keeper) = use() {
            throw EmbeddedPostgresError(
                "the embedded database at \(directory) is running (port \(port)) for process \(keeper.pid), which stops it when it ends; stop that process first (or `embedded stop --force`); \(outcome)"
            )
        }
        stop()
        guard runningPort() == nil else { throw EmbeddedPostgresError("could not stop the embedded database at \(directory) (its postgres.log says why); \(outcome)") }
        return true
    }

    /// Deletes the cluster's folder; one left running by a process that is gone is stopped
    /// first (`stopUnlessKept`), one another live process keeps is refused. Returns whether it
    /// stopped the cluster.
    @discardableResult
    public func remove() throws -> Bool {
        let stopped = try stopUnlessKept(outcome: "nothing was removed")
        try FileManager.default.removeItem(at: configuration.directory)
        return stopped
    }

    // MARK: - Setup

    private var runningAsRoot: Bool { geteuid() == 0 }

    private func prepareDirectories() throws {
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: configuration.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        for directory in [dataDirectory, socketDirectory] where !fileManager.fileExists(atPath: directory.path) {
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        }
        if runningAsRoot {
            guard let account = getpwnam(configuration.osUserWhenRoot) else {
                throw EmbeddedPostgresError("PostgreSQL refuses to run as root and there is no '\(configuration.osUserWhenRoot)' user to run it as; install the postgresql package or set DATABASE_URL")
            }
            try Self.checkTraversable(configuration.directory, by: account.pointee.pw_uid, group: account.pointee.pw_gid, userName: configuration.osUserWhenRoot)
            for directory in [dataDirectory, socketDirectory] {
                guard chown(directory.path, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else {
                    throw EmbeddedPostgresError("could not hand \(directory.path) to the '\(configuration.osUserWhenRoot)' user (errno \(errno))")
                }
            }
            if !FileManager.default.fileExists(atPath: logFile.path) {
                _ = FileManager.default.createFile(atPath: logFile.path, contents: nil, attributes: [.posixPermissions: 0o640])
            }
            _ = chown(logFile.path, account.pointee.pw_uid, account.pointee.pw_gid)
        }
    }

    /// The cluster's user must be able to enter every folder above the cluster (PostgreSQL
    /// changes into its data directory); a checkout under /root, say, is closed to it.
    static func checkTraversable(_ directory: URL, by uid: uid_t, group gid: gid_t, userName: String) throws {
        if let closed = firstClosedFolder(above: directory, uid: uid, gid: gid) {
            throw EmbeddedPostgresError(
                "the embedded database runs as the '\(userName)' user, which cannot enter \(closed); point HABITSYNC_DATA_DIR (or --data-dir) at a folder it can reach, such as /var/tmp/habitsync, or set DATABASE_URL"
            )
        }
    }

    /// The first existing folder on the way to `directory` that `uid`/`gid` cannot enter.
    static func firstClosedFolder(above directory: URL, uid: uid_t, gid: gid_t) -> String? {
        var folders: [String] = []
        var current = directory.standardizedFileURL
        while current.path != "/" {
            folders.append(current.path)
            current = current.deletingLastPathComponent()
        }
        for path in folders.reversed() {
            var info = stat()
            guard stat(path, &info) == 0 else { continue }
            let mode = info.st_mode
            let traversable = info.st_uid == uid ? mode & S_IXUSR != 0 : info.st_gid == gid ? mode & S_IXGRP != 0 : mode & S_IXOTH != 0
            if !traversable { return path }
        }
        return nil
    }

    /// Where the cluster for `requested` lives. As root, when the cluster's user cannot reach
    /// `requested` (a checkout in root's home, a `mktemp -d` folder), a system folder keyed by
    /// `requested`'s path: `systemRoot/<hash>`, the same for every command run on that checkout,
    /// so a second command still finds the running cluster. Otherwise `requested` itself.
    public static func reachableDirectory(
        for requested: URL, osUserWhenRoot: String = "postgres",
        systemRoot: URL = EmbeddedPostgres.systemRoot
    ) -> URL {
        guard geteuid() == 0, let account = getpwnam(osUserWhenRoot),
            firstClosedFolder(above: requested, uid: account.pointee.pw_uid, gid: account.pointee.pw_gid) != nil
        else { return requested }
        // FNV-1a over the path: stable across runs and builds (Hasher is seeded per process).
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in requested.standardizedFileURL.path.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return systemRoot.appendingPathComponent(String(repeating: "0", count: 16 - hex.count) + hex)
    }

    private func initialise() throws {
        let password = Self.randomHex(bytes: 24)
        // initdb reads the password from a file the cluster's user can read; it is removed at once.
        let initialPasswordFile = socketDirectory.appendingPathComponent("initdb.password")
        try password.write(to: initialPasswordFile, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: initialPasswordFile) }
        if runningAsRoot, let account = getpwnam(configuration.osUserWhenRoot) {
            _ = chown(initialPasswordFile.path, account.pointee.pw_uid, account.pointee.pw_gid)
        }
        _ = chmod(initialPasswordFile.path, 0o600)
        logger.info("creating the embedded PostgreSQL cluster", metadata: ["directory": "\(dataDirectory.path)"])
        try run(
            binaries.path("initdb"),
            [
                "-D", dataDirectory.path, "-U", configuration.superuser, "--auth=scram-sha-256",
                "--pwfile=\(initialPasswordFile.path)", "--locale=C.UTF-8", "--encoding=UTF8",
            ] + (configuration.durable ? [] : ["--no-sync"]), asClusterOwner: true)
        // The settings that change per start (the port) live in a file of ours.
        let include = "\n# habitsync-server: port, sockets and tuning for the embedded cluster\ninclude_if_exists = 'habitsync.conf'\n"
        let handle = try FileHandle(forWritingTo: dataDirectory.appendingPathComponent("postgresql.conf"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(include.utf8))
        try handle.close()
        _ = FileManager.default.createFile(atPath: passwordFile.path, contents: Data(password.utf8), attributes: [.posixPermissions: 0o600])
    }

    private func writeServerSettings(port: Int) throws {
        var settings = """
            listen_addresses = '127.0.0.1'
            port = \(port)
            unix_socket_directories = '\(socketDirectory.path.replacingOccurrences(of: "'", with: "''"))'
            max_connections = \(configuration.maxConnections)
            shared_buffers = '128MB'
            max_locks_per_transaction = 256

            """
        if !configuration.durable {
            settings += "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
        }
        let file = dataDirectory.appendingPathComponent("habitsync.conf")
        try settings.write(to: file, atomically: false, encoding: .utf8)
        if runningAsRoot, let account = getpwnam(configuration.osUserWhenRoot) {
            _ = chown(file.path, account.pointee.pw_uid, account.pointee.pw_gid)
        }
    }

    private func ensureDatabase(port: Int, password: String) throws {
        let psql = binaries.path("psql")
        let exists = try run(
            psql,
            [
                "-X", "-A", "-t", "-h", "127.0.0.1", "-p", String(port), "-U", configuration.superuser, "-d", "postgres",
                "-c", "SELECT 1 FROM pg_database WHERE datname = '\(configuration.databaseName.replacingOccurrences(of: "'", with: "''"))'",
            ], asClusterOwner: false, environment: ["PGPASSWORD": password])
        if exists.trimmingCharacters(in: .whitespacesAndNewlines) == "1" { return }
        try run(
            binaries.path("createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", configuration.superuser, configuration.databaseName],
            asClusterOwner: false, environment: ["PGPASSWORD": password])
    }

    private func connectionString(port: Int, password: String, database: String) -> String {
        // Hex password and fixed names: nothing here needs quoting.
        "host=127.0.0.1 port=\(port) user=\(configuration.superuser) password=\(password) dbname=\(database)"
    }

    // MARK: - Processes

    @discardableResult
    private func run(_ executable: String, _ arguments: [String], asClusterOwner: Bool, environment: [String: String] = [:]) throws -> String {
        var program = executable
        var argv = arguments
        if asClusterOwner && runningAsRoot {
            program = FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") ? "/usr/sbin/runuser" : "/sbin/runuser"
            argv = ["-u", configuration.osUserWhenRoot, "--", executable] + arguments
        }
        var env = ProcessInfo.processInfo.environment
        env["LC_ALL"] = "C.UTF-8"
        env["LANG"] = "C.UTF-8"
        for (key, value) in environment { env[key] = value }
        // runuser keeps the working directory, which the cluster's user must be able to enter.
        let outcome = try ChildProcess.run(program, argv, environment: env, directory: configuration.directory)
        guard outcome.status == 0 else {
            let name = URL(fileURLWithPath: executable).lastPathComponent
            var message = "\(name) failed with status \(outcome.status): \(outcome.output)"
            if name == "pg_ctl", let log = try? String(contentsOf: logFile, encoding: .utf8) {
                message += "\nlast lines of \(logFile.path):\n" + log.split(separator: "\n").suffix(10).joined(separator: "\n")
            }
            throw EmbeddedPostgresError(message)
        }
        return outcome.output
    }

    /// A loopback port nothing listens on right now (the kernel's pick for a socket bound to 0).
    public static func freeLoopbackPort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw EmbeddedPostgresError("could not open a socket to find a free port") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw EmbeddedPostgresError("could not bind a loopback port") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
