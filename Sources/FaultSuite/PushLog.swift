import Synchronization

/// Every attempt of every device, in the order they finished. Shared by the device tasks and
/// the scenario that watches them; a Mutex keeps the appends and reads consistent.
final class PushLog: Sendable {
    private let attempts = Mutex<[PushAttempt]>([])

    func append(_ attempt: PushAttempt) { attempts.withLock { $0.append(attempt) } }

    var all: [PushAttempt] { attempts.withLock { $0 } }

    var acknowledgedCount: Int { attempts.withLock { $0.count(where: \.isAcknowledged) } }
}
