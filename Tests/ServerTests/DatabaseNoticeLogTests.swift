import LibPQClient
import Logging
import Synchronization
import Testing

@testable import HabitSyncServer

/// Database notices reach the structured log at most once a minute per kind, with the count
/// of those left out, their text bounded.
@Suite struct DatabaseNoticeLogTests {
    static let start = ContinuousClock.now
    typealias Key = NoticeRateLimiter.Key

    @Test func theSameNoticeIsLoggedOnceAWindowWithTheCountLeftOut() {
        var limiter = NoticeRateLimiter(window: .seconds(60), capacity: 8)
        let busy = Key(severity: "WARNING", sqlState: "01000", message: "there is already a transaction in progress")
        #expect(limiter.admit(busy, at: Self.start) == 0)
        for second in 1..<60 { #expect(limiter.admit(busy, at: Self.start + .seconds(second)) == nil) }
        // Another kind is not held back by the first.
        let other = Key(severity: "NOTICE", sqlState: "00000", message: "relation exists, skipping")
        #expect(limiter.admit(other, at: Self.start + .seconds(30)) == 0)
        // A window later: logged, saying 59 were left out; then quiet again.
        #expect(limiter.admit(busy, at: Self.start + .seconds(60)) == 59)
        #expect(limiter.admit(busy, at: Self.start + .seconds(61)) == nil)
        #expect(limiter.admit(busy, at: Self.start + .seconds(200)) == 1)
    }

    @Test func manyDistinctNoticesStartTheMemoryOverInsteadOfGrowing() {
        var limiter = NoticeRateLimiter(window: .seconds(60), capacity: 4)
        for n in 0..<4 { #expect(limiter.admit(Key(severity: "WARNING", sqlState: "01000", message: "m\(n)"), at: Self.start) == 0) }
        #expect(limiter.admit(Key(severity: "WARNING", sqlState: "01000", message: "m0"), at: Self.start) == nil)
        // A fifth kind: the memory starts over, so m0 is logged again.
        #expect(limiter.admit(Key(severity: "WARNING", sqlState: "01000", message: "m4"), at: Self.start) == 0)
        #expect(limiter.admit(Key(severity: "WARNING", sqlState: "01000", message: "m0"), at: Self.start) == 0)
    }

    @Test func aLoggedNoticeHasItsLevelFieldsAndBoundedText() {
        let records = LogRecords()
        let logger = Logger(label: "notices") { _ in CapturingHandler(records: records) }
        let log = DatabaseNoticeLog(logger: logger)
        let long = String(repeating: "x", count: 10_000)
        log.log(PGNotice(severity: "WARNING", sqlState: "01000", message: long, detail: "from 127.0.0.1:9701"), at: Self.start)
        log.log(PGNotice(severity: "WARNING", sqlState: "01000", message: long, detail: "from 127.0.0.1:9702"), at: Self.start + .seconds(1))
        log.log(PGNotice(severity: "NOTICE", sqlState: "42P07", message: "relation \"t\" already exists, skipping", detail: nil), at: Self.start)
        log.log(PGNotice(severity: "WARNING", sqlState: "01000", message: long, detail: nil), at: Self.start + .seconds(61))
        let logged = records.value.withLock { $0 }
        #expect(logged.map(\.0) == [.warning, .notice, .warning])
        #expect(logged.allSatisfy { $0.1 == "database notice" })
        #expect(logged[0].2["db.message"]?.description.count == DatabaseNoticeLog.textLimit)
        #expect(logged[0].2["db.detail"]?.description == "from 127.0.0.1:9701")
        #expect(logged[0].2["db.suppressed"] == nil)
        #expect(logged[1].2["db.sqlstate"]?.description == "42P07")
        #expect(logged[2].2["db.suppressed"]?.description == "1")
    }
}

/// What a `CapturingHandler` was given.
final class LogRecords: Sendable {
    let value = Mutex<[(Logger.Level, String, Logger.Metadata)]>([])
}

/// Keeps what is logged.
struct CapturingHandler: LogHandler {
    let records: LogRecords
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        records.value.withLock { $0.append((event.level, event.message.description, event.metadata ?? [:])) }
    }
}
