#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's open-file limit (`RLIMIT_NOFILE`). Every HTTP connection, event stream and
/// database connection is a descriptor; systemd's default soft limit of 1,024 is far below
/// what `--max-streams` allows, so `serve` raises the soft limit to the hard one at start.
enum DescriptorLimit {
    /// Descriptors kept for everything that is not an HTTP connection: the database pool and
    /// listener, log files, the embedded database's pipes, libraries' own.
    static let reserved = 64

    /// Raises the soft limit to the hard one; returns the soft limit in force after.
    static func raiseSoftLimit() -> (soft: Int, hard: Int, raisedFrom: Int?) {
        var limit = rlimit()
        guard getrlimit(resourceLimitNoFile, &limit) == 0 else { return (1024, 1024, nil) }
        let before = limit.rlim_cur
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resourceLimitNoFile, &raised) == 0 { limit = raised }
        }
        return (clamp(limit.rlim_cur), clamp(limit.rlim_max), limit.rlim_cur != before ? clamp(before) : nil)
    }

    /// HTTP connections that fit beside the database pool and the reserve.
    static func connectionsThatFit(soft: Int, poolSize: Int) -> Int {
        max(1, soft - poolSize - reserved)
    }

    private static func clamp(_ value: rlim_t) -> Int {
        value > rlim_t(Int32.max) ? Int(Int32.max) : Int(value)
    }

    #if canImport(Glibc)
        private static let resourceLimitNoFile = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
        private static let resourceLimitNoFile = RLIMIT_NOFILE
    #endif
}
