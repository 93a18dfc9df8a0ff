import AsyncHTTPClient
import Foundation
import HabitSyncDomain
import HabitSyncStore
import NIOCore
import NIOHTTP1
import NIOSSL

/// Sends background notifications to APNs over HTTP/2 (one client, its connections kept open,
/// as Apple asks), with the tenant's provider token. Knows nothing of users or changes.
public final class APNsClient: Sendable {
    let client: HTTPClient
    let settings: WakeSettings
    let tokens = APNsProviderTokens()

    public init(settings: WakeSettings) {
        var tls = TLSConfiguration.makeClientConfiguration()
        if !settings.additionalTrustRoots.isEmpty { tls.additionalTrustRoots = [.certificates(settings.additionalTrustRoots)] }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .nanoseconds(Int64(settings.timeout / .nanoseconds(1))), read: .nanoseconds(Int64(settings.timeout / .nanoseconds(1)))))
        configuration.httpVersion = .automatic
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.settings = settings
    }

    public func shutdown() async { try? await client.shutdown() }

    /// A background notification: `content-available` alone, at the low priority Apple
    /// requires of it.
    static let body = #"{"aps":{"content-available":1}}"#

    /// Apple's answer to one notification.
    public struct Answer: Sendable, Equatable {
        public let status: Int
        /// Apple's `reason` (`BadDeviceToken`, `Unregistered`, …) when it refused.
        public let reason: String?
    }

    public func send(_ wake: WakeQueue.Claimed) async throws -> Answer {
        let host = settings.endpoint ?? (wake.environment == .sandbox ? WakeSettings.sandboxHost : WakeSettings.productionHost)
        var request = HTTPClientRequest(url: host + "/3/device/" + wake.token)
        request.method = .POST
        let token = try tokens.token(keyID: wake.keyID, teamID: wake.teamID, signingKey: wake.signingKey)
        request.headers.add(name: "authorization", value: "bearer " + token)
        request.headers.add(name: "apns-push-type", value: "background")
        request.headers.add(name: "apns-priority", value: "5")
        request.headers.add(name: "apns-topic", value: wake.topic)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: Self.body))
        let response = try await client.execute(request, timeout: .nanoseconds(Int64(settings.timeout / .nanoseconds(1))))
        let body = try await response.body.collect(upTo: 16 * 1024)
        var reason: String?
        if response.status != .ok, case .object(let fields)? = try? JSONParser.parse(bytes: Array(body.readableBytesView)),
            case .string(let text)? = fields["reason"]
        {
            reason = String(text.prefix(64))
        }
        if response.status == .forbidden, reason == "ExpiredProviderToken" || reason == "InvalidProviderToken" {
            tokens.forget(keyID: wake.keyID, teamID: wake.teamID)
        }
        return Answer(status: Int(response.status.code), reason: reason)
    }
}
