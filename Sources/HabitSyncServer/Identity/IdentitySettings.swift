import GuardedFetch

/// How identity providers' keys are fetched and kept (docs/identity.md, "Keys").
public struct IdentitySettings: Sendable, Equatable {
    /// Known keys older than this are fetched again in the background; requests keep using
    /// them meanwhile.
    public var refreshInterval: Duration = .seconds(300)
    /// A token whose `kid` is not among the keys fetches them again at once, but at most this
    /// often per key source: a flood of made-up `kid`s costs one fetch.
    public var unknownKeyRefreshInterval: Duration = .seconds(60)
    /// Known keys keep verifying through a provider outage for this long after the last
    /// successful fetch; then tokens are refused until the provider answers again.
    public var maximumStaleness: Duration = .seconds(86_400)
    /// After a failed fetch, none is tried again for the same source before this.
    public var failureBackoff: Duration = .seconds(10)
    /// Timeout, size limit, HTTPS only, private addresses.
    public var fetch = FetchPolicy()

    public init() {}
}
