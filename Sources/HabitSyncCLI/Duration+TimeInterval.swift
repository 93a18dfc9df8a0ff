import Foundation

extension Duration {
    /// The duration in seconds, for the APIs (JWT expiry, retention, clock skew) that take a TimeInterval.
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
