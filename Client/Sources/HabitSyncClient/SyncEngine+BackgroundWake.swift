import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An iPhone that is not in the foreground hears of another device's change through a silent
/// notification the server sends through APNs (docs/client.md, "Waking in the background"):
/// register the token APNs gives the app, and sync when the notification comes.
extension SyncEngine {
    /// What a wake's sync came to: what `didReceiveRemoteNotification`'s completion handler
    /// wants (`UIBackgroundFetchResult` `.newData`, `.noData`, `.failed`).
    public enum BackgroundWakeResult: Sendable, Equatable {
        case newData, noData, failed
    }

    /// Registers this device's APNs token with the server (`PUT /v1/devices/{id}/push-token`),
    /// from `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`. Registering
    /// again replaces it (APNs may give a new one after a restore).
    public func registerPushToken(_ token: Data) async throws {
        let hex = token.map { String(format: "%02x", $0) }.joined()
        let body = try JSONSerialization.data(withJSONObject: ["token": hex])
        let (answer, response) = try await send("PUT", path: Self.pushTokenPath(deviceID: store.deviceID), body: body)
        guard response.statusCode == 204 else { throw Self.error(response, body: answer) }
    }

    /// Stops the wakes of this device (signing out, or the user turned them off).
    public func unregisterPushToken() async throws {
        let (answer, response) = try await send("DELETE", path: Self.pushTokenPath(deviceID: store.deviceID), body: nil)
        guard response.statusCode == 204 else { throw Self.error(response, body: answer) }
    }

    /// The one call for `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`:
    /// syncs once, and says whether it brought anything. Never throws: iOS wants an answer
    /// within about 30 seconds whatever happened.
    public func handleBackgroundWake() async -> BackgroundWakeResult {
        do {
            let report = try await sync()
            return report.pulled > 0 ? .newData : .noData
        } catch {
            return .failed
        }
    }

    /// The device's id as one path segment: every character but the unreserved percent-encoded.
    static func pushTokenPath(deviceID: String) -> String {
        "v1/devices/" + (deviceID.addingPercentEncoding(withAllowedCharacters: cursorCharacters) ?? "") + "/push-token"
    }
}
