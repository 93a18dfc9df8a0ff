import CGuardedFetch
import Foundation
import NIOPosix

/// One GET of a URL someone else controls (an identity provider's keys), through libcurl: no
/// redirects, no proxies, HTTPS only (plain HTTP to loopback only when the policy allows it),
/// a timeout, a size limit, and no private addresses unless allowed. The address check runs
/// on the very address libcurl connects to, so DNS rebinding cannot get past it.
public struct GuardedFetcher: Sendable {
    public let policy: FetchPolicy
    private let threadPool: NIOThreadPool
    private let connections: KeptConnections?

    /// `keepsConnections`: `post` reuses a connection (and its TLS session) to the same host
    /// and port from an earlier request of this fetcher, rather than opening one each time.
    public init(policy: FetchPolicy, threadPool: NIOThreadPool = .singleton, keepsConnections: Bool = false) {
        self.policy = policy
        self.threadPool = threadPool
        connections = keepsConnections ? KeptConnections() : nil
    }

    /// Hosts a plain-HTTP test server may be named by.
    static let loopbackHosts: Set<String> = ["127.0.0.1", "::1", "[::1]", "localhost"]

    /// The address policy for `url`, or why the URL is refused before anything is sent.
    func addressPolicy(for url: String) throws(FetchFailure) -> (httpsOnly: Bool, addresses: gf_address_policy) {
        guard url.utf8.count <= 2048 else { throw .urlRefused("longer than 2048 bytes") }
        guard !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw .urlRefused("contains a space or control character")
        }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { throw .urlRefused("not an absolute URL with a host") }
        guard components.user == nil, components.password == nil else { throw .urlRefused("carries credentials") }
        switch scheme {
        case "https":
            return (true, policy.allowPrivateAddresses ? GF_ADDRESSES_ANY : GF_ADDRESSES_PUBLIC)
        case "http" where policy.allowLoopbackHTTP && Self.loopbackHosts.contains(host.lowercased()):
            return (false, policy.allowPrivateAddresses ? GF_ADDRESSES_ANY : GF_ADDRESSES_LOOPBACK)
        case "http":
            throw .urlRefused("plain HTTP (only HTTPS, or HTTP to loopback when the server allows it for tests)")
        default:
            throw .urlRefused("scheme \(scheme) (only HTTPS)")
        }
    }

    /// The status of the answer to `POST url` with `body` and `headers` (each "Name: value",
    /// no line breaks): any status is an answer; only a transfer that failed throws. The
    /// answer's body is read up to the policy's size and dropped.
    public func post(_ url: String, headers: [String], body: [UInt8], userAgent: String) async throws(FetchFailure) -> Int {
        let (httpsOnly, addresses) = try addressPolicy(for: url)
        guard headers.allSatisfy({ !$0.contains("\r") && !$0.contains("\n") }) else { throw .urlRefused("a header holds a line break") }
        let timeoutMilliseconds = Int(policy.timeout / .milliseconds(1))
        let maximumBytes = policy.maximumBytes
        // curl waits for "100 Continue" before a large body unless told not to.
        let lines = headers + ["Expect:"]
        let connections = connections
        let outcome: Result<Int, FetchFailure>
        do {
            outcome = try await threadPool.runIfActive {
                var result = gf_result()
                var cStrings = lines.map { strdup($0) }
                defer { for pointer in cStrings { free(pointer) } }
                cStrings.withUnsafeMutableBufferPointer { pointers in
                    pointers.withMemoryRebound(to: UnsafePointer<CChar>?.self) { constant in
                        body.withUnsafeBufferPointer { bytes in
                            // An empty array has no address; any non-null one with length 0 is
                            // still a POST (of nothing), which a null body would not be.
                            gf_request(
                                url, constant.baseAddress, constant.count, bytes.baseAddress ?? UnsafePointer(bitPattern: 1), bytes.count, userAgent,
                                timeoutMilliseconds, maximumBytes, httpsOnly ? 1 : 0, addresses, connections?.pointer, &result)
                        }
                    }
                }
                defer { gf_result_free(&result) }
                // The answer came; only its body was longer than is read.
                if result.outcome == GF_TOO_LARGE, result.status > 0 { return .success(result.status) }
                if let failure = Self.failure(of: result, maximumBytes: maximumBytes) { return .failure(failure) }
                return .success(result.status)
            }
        } catch {
            throw .transferFailed("the server is shutting down")
        }
        return try outcome.get()
    }

    /// The body of a 200 answer to `GET url`.
    public func get(_ url: String) async throws(FetchFailure) -> [UInt8] {
        let (httpsOnly, addresses) = try addressPolicy(for: url)
        let timeoutMilliseconds = Int(policy.timeout / .milliseconds(1))
        let maximumBytes = policy.maximumBytes
        let outcome: Result<[UInt8], FetchFailure>
        do {
            outcome = try await threadPool.runIfActive {
                var result = gf_result()
                gf_get(url, timeoutMilliseconds, maximumBytes, httpsOnly ? 1 : 0, addresses, &result)
                defer { gf_result_free(&result) }
                if let failure = Self.failure(of: result, maximumBytes: maximumBytes) { return .failure(failure) }
                guard result.status == 200 else { return .failure(.status(result.status)) }
                guard let body = result.body else { return .success([]) }
                return .success(Array(UnsafeBufferPointer(start: body, count: result.length)))
            }
        } catch {
            throw .transferFailed("the server is shutting down")
        }
        return try outcome.get()
    }

    /// Why a transfer failed; nil when it did not (an answer came, whatever its status).
    private static func failure(of result: gf_result, maximumBytes: Int) -> FetchFailure? {
        switch result.outcome {
        case GF_OK: return nil
        case GF_TOO_LARGE: return .tooLarge(limit: maximumBytes)
        case GF_ADDRESS_REFUSED: return .addressRefused
        case GF_TIMEOUT: return .timedOut
        default: return .transferFailed(withUnsafeBytes(of: result.message) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) })
        }
    }
}
