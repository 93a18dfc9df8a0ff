/// What a fetch of someone else's URL may do. The defaults suit keys fetched from an identity
/// provider: HTTPS to a public address, a few seconds, a few hundred KiB.
public struct FetchPolicy: Sendable, Equatable {
    /// For the whole transfer, connecting included.
    public var timeout: Duration
    /// Largest body accepted (after content decoding); a larger one fails the fetch.
    public var maximumBytes: Int
    /// Plain `http://` to a loopback host (`127.0.0.1`, `::1`, `localhost`), for test servers.
    public var allowLoopbackHTTP: Bool
    /// Private, loopback, link-local and similar addresses; refused unless an operator allows them.
    public var allowPrivateAddresses: Bool

    public init(timeout: Duration = .seconds(5), maximumBytes: Int = 256 * 1024, allowLoopbackHTTP: Bool = false, allowPrivateAddresses: Bool = false) {
        self.timeout = timeout
        self.maximumBytes = maximumBytes
        self.allowLoopbackHTTP = allowLoopbackHTTP
        self.allowPrivateAddresses = allowPrivateAddresses
    }
}
