import Foundation
import HabitSyncDomain
import HabitSyncStore
import Hummingbird
import NIOCore

/// `PUT /v1/devices/{id}/push-token` (a device's APNs token, so that it is woken when another
/// device of the user pushes; docs/protocol.md, "Background wakes") and `DELETE` of it.
struct DevicesController: Sendable {
    let tokens: PushTokenStore

    func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.put("devices/:id/push-token") { request, context in try await handleRegister(request, context) }
        group.delete("devices/:id/push-token") { request, context in try await handleRemove(request, context) }
    }

    /// The device the path names (percent-decoded), by the rules of `X-Device-Id`.
    static func device(_ context: AuthenticatedRequestContext) throws -> String {
        guard let raw = context.parameters.get("id"), let id = raw.removingPercentEncoding, DeviceID.isWellFormed(id), !ServerDevice.isReserved(id)
        else {
            throw APIError(.invalidDeviceID, "the device id in the path must be 1–100 printable characters, as X-Device-Id", field: "id")
        }
        return id
    }

    /// `{"token": "<hex>"}`: the token APNs gave the app, as hex (any case).
    static func token(_ body: ByteBuffer) throws -> String {
        guard case .object(let fields)? = try? JSONParser.parse(bytes: Array(body.readableBytesView)) else {
            throw APIError(.malformedJSON, "the body must be a JSON object: {\"token\": \"<the APNs device token in hex>\"}")
        }
        if let unknown = fields.keys.sorted().first(where: { $0 != "token" }) {
            throw APIError(.unknownField, "unknown field '\(String(unknown.prefix(64)))' (token is the only one)", field: String(unknown.prefix(64)))
        }
        guard case .string(let text)? = fields["token"], let token = PushTokenStore.checkedToken(text) else {
            throw APIError(.invalidField, "token must be the APNs device token in hex: 16 to 400 hex digits, an even number", field: "token")
        }
        return token
    }

    func handleRegister(_ request: Request, _ context: AuthenticatedRequestContext) async throws -> Response {
        let device = try Self.device(context)
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: 4096)
        } catch {
            throw APIError(.tooLarge, "a push token's body is at most 4096 bytes")
        }
        let token = try Self.token(body)
        try await tokens.register(identity: context.identity, device: device, token: token)
        return Response(status: .noContent)
    }

    func handleRemove(_ request: Request, _ context: AuthenticatedRequestContext) async throws -> Response {
        let device = try Self.device(context)
        _ = try await tokens.remove(identity: context.identity, device: device)
        return Response(status: .noContent)
    }
}
