import CGuardedFetch

/// libcurl's connections, TLS sessions and DNS answers kept between one fetcher's requests
/// (`gf_connections`). Every connection in it was opened, and its address checked, under
/// that fetcher's policy.
final class KeptConnections: Sendable {
    /// Safe to share across threads: libcurl takes `gf_connections`' own lock around every use
    /// of the shared data, and the pointer is freed only in `deinit`, when no request (each
    /// holds this object for its duration) can be using it. Nil when out of memory: each
    /// request then opens its own connection.
    nonisolated(unsafe) let pointer: OpaquePointer?

    init() { pointer = gf_connections_new() }

    deinit { gf_connections_free(pointer) }
}
