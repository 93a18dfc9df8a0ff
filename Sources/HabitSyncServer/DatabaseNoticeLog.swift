import LibPQClient
import Logging
import Synchronization

/// Database notices and warnings (a Citus worker's relayed `WARNING`, a migration's `NOTICE`)
/// into the structured log, at most once a minute for the same severity, SQLSTATE and message;
/// the next one logged says how many were left out. libpq would otherwise print each raw on
/// stderr, outside the JSON log, once per request when a cluster is misbehaving.
public final class DatabaseNoticeLog: Sendable {
    /// How long the same notice stays quiet after it was logged.
    public static let window: Duration = .seconds(60)
    /// Distinct notices remembered at once. Beyond that the memory starts over: notices may then
    /// be logged again sooner, and the counts of those left out so far are dropped.
    static let capacity = 256
    /// Longest message or detail logged, in characters.
    static let textLimit = 300

    private let logger: Logger
    private let limiter = Mutex(NoticeRateLimiter(window: window, capacity: capacity))

    public init(logger: Logger) { self.logger = logger }

    /// The sink to give every connection configuration of the process.
    public var sink: PGNoticeSink { PGNoticeSink { [self] notice in log(notice, at: .now) } }

    func log(_ notice: PGNotice, at now: ContinuousClock.Instant) {
        let key = NoticeRateLimiter.Key(severity: notice.severity, sqlState: notice.sqlState ?? "", message: notice.message)
        guard let suppressed = limiter.withLock({ $0.admit(key, at: now) }) else { return }
        var metadata: Logger.Metadata = [
            "db.severity": "\(notice.severity)",
            "db.sqlstate": "\(notice.sqlState ?? "")",
            "db.message": "\(String(notice.message.prefix(Self.textLimit)))",
        ]
        if let detail = notice.detail { metadata["db.detail"] = "\(String(detail.prefix(Self.textLimit)))" }
        if suppressed > 0 { metadata["db.suppressed"] = "\(suppressed)" }
        logger.log(level: Self.level(notice.severity), "database notice", metadata: metadata)
    }

    static func level(_ severity: String) -> Logger.Level {
        switch severity {
        case "WARNING": .warning
        case "NOTICE": .notice
        case "INFO": .info
        default: .debug
        }
    }
}

/// Which notices to log: the first of a kind, then none of it for `window`; the next one after
/// that carries the count of those left out. Pure, so its rule is tested without a clock.
struct NoticeRateLimiter {
    struct Key: Hashable {
        let severity: String
        let sqlState: String
        let message: String
    }

    let window: Duration
    let capacity: Int
    private var quiet: [Key: (since: ContinuousClock.Instant, suppressed: Int)] = [:]

    init(window: Duration, capacity: Int) {
        self.window = window
        self.capacity = capacity
    }

    /// Nil: leave this one out. Otherwise log it, with how many of its kind were left out since
    /// the last one logged.
    mutating func admit(_ key: Key, at now: ContinuousClock.Instant) -> Int? {
        if let entry = quiet[key], now - entry.since < window {
            quiet[key] = (entry.since, entry.suppressed + 1)
            return nil
        }
        let suppressed = quiet[key]?.suppressed ?? 0
        if quiet[key] == nil, quiet.count >= capacity { quiet.removeAll() }
        quiet[key] = (now, 0)
        return suppressed
    }
}
