/// One push attempt as the device saw it.
struct PushAttempt: Sendable {
    enum Outcome: Sendable {
        case acknowledged(results: [String])
        case status(Int, retryAfter: String?)
        case transportFailure
    }

    let device: Int
    let batch: Int
    let started: ContinuousClock.Instant
    let finished: ContinuousClock.Instant
    let outcome: Outcome

    var isAcknowledged: Bool {
        if case .acknowledged = outcome { return true }
        return false
    }

    var isTransportFailure: Bool {
        if case .transportFailure = outcome { return true }
        return false
    }

    /// The HTTP status when the server answered with anything but 200.
    var errorStatus: Int? {
        if case .status(let code, _) = outcome { return code }
        return nil
    }

    /// The change results of an acknowledgement.
    var results: [String]? {
        if case .acknowledged(let results) = outcome { return results }
        return nil
    }
}
