import Foundation

/// Runs blocking work (plain sockets) on a thread of its own: it must not hold the few threads
/// of the concurrency pool while other tasks wait for them. For the load generators.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// Waits, by a count of probes, until the server at `baseURL` says on `/metrics` that its
/// change listener is connected (it comes up beside the HTTP listener, not before it).
public func waitUntilListening(baseURL: String, probes: Int = 1200) async throws {
    let probe = DeviceClient(baseURL: baseURL, token: "", device: "probe", timeout: 30)
    for _ in 0..<probes {
        if let metrics = try? await probe.get("/metrics"), metrics.text.contains("habitsync_realtime_listening 1") { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw HarnessError("\(baseURL) never listened for changes")
}
