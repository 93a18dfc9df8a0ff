import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How the engine's requests reach the server: URLSession by default; an app may wrap it
/// (logging, certificate pinning), and the convergence suite wraps it to inject faults.
public protocol SyncTransport: Sendable {
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)
}

public struct URLSessionTransport: SyncTransport {
    public let session: URLSession

    /// - Parameter session: by default one without a response cache (`uncachedConfiguration`).
    public init(session: URLSession = URLSessionTransport.uncachedSession) { self.session = session }

    /// An ephemeral configuration without a response cache. A sync answer is never one to
    /// serve from a cache; and on Linux a session with a cache looks each data task up on
    /// another queue before the task has its protocol, so a task cancelled in that window
    /// traps in FoundationNetworking ("a task that in not in the registry",
    /// swift-corelibs-foundation issue 3296). Without a cache the protocol exists at `resume()`.
    public static func uncachedConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }

    /// The default transport's session: `uncachedConfiguration`, shared.
    public static let uncachedSession = URLSession(configuration: uncachedConfiguration())

    /// A data task, cancelled with the calling task. Not `session.data(for:)`: on Linux its
    /// cancellation can deadlock with the response arriving (`URLSessionTask.cancelLater`).
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let handle = DataTaskHandle()
        let (data, response) = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: SyncProtocolError.malformedResponse)
                    }
                }
                handle.start(task)
            }
        } onCancel: {
            handle.cancel()
        }
        guard let http = response as? HTTPURLResponse else { throw SyncProtocolError.malformedResponse }
        return (data, http)
    }
}

/// The data task of one `send`, and whether it was cancelled before it started.
private final class DataTaskHandle: Sendable {
    private let state = Locked<(task: URLSessionDataTask?, cancelled: Bool)>((nil, false))

    func start(_ task: URLSessionDataTask) {
        let cancelled = state.withLock { state in
            state.task = task
            return state.cancelled
        }
        task.resume()
        if cancelled { task.cancelLater() }
    }

    func cancel() {
        let task = state.withLock { state in
            state.cancelled = true
            return state.task
        }
        task?.cancelLater()
    }
}
