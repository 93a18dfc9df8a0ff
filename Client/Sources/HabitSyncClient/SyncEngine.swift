import Foundation
import HabitSyncDomain

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The device's half of the protocol over HTTP: pushes the outbox batch by batch, then pulls
/// pages to the end. Network failures leave the batch persisted, so the next `sync()` sends the
/// same bytes again; `410 cursor_expired` starts the pull over without touching pending edits;
/// `410 reset_required` and `410 account_restarted` (the server's history changed) and a
/// digest that differs are settled by the engine and told to `onTimelineEvent`;
/// `410 account_erased` is `SyncError.accountErased`.
public struct SyncEngine: Sendable {
    public let store: LocalStore
    public let baseURL: URL
    /// The access token for each request (refreshed by the app as it needs).
    public let token: @Sendable () async throws -> String
    public let transport: any SyncTransport
    public var pageSize = 500
    public var maximumChanges = 500
    /// Told of each batch's answer as soon as it is stored, also when a later step of the
    /// same `sync()` fails (the report `sync()` returns is lost then; these are not).
    public var onSettled: (@Sendable (SettleReport) -> Void)?
    /// Told when the server's history changed under this device, or its copy differed from
    /// the server's, and what the engine did about it (`TimelineEvent`).
    public var onTimelineEvent: (@Sendable (TimelineEvent) -> Void)?
    /// Told after each pulled page is stored: the phase the pull has reached and about how
    /// much is left (docs/client.md, "A new phone: the main screen first").
    public var onProgress: (@Sendable (PullProgress) -> Void)?
    /// Keep only this many days of dated history (today included), e.g. 90 on a watch; nil
    /// keeps everything. Days are counted in `calendarZone`.
    public var historyDays: Int?
    public var calendarZone: TimeZone = .current
    /// Where the engine writes a line about each `TimelineEvent`: standard error unless the
    /// app routes it to its own logging.
    public var log: @Sendable (String) -> Void = { line in FileHandle.standardError.write(Data("habitsync: \(line)\n".utf8)) }

    public init(
        store: LocalStore, baseURL: URL, transport: any SyncTransport = URLSessionTransport(),
        token: @escaping @Sendable () async throws -> String
    ) {
        self.store = store
        self.baseURL = baseURL
        self.transport = transport
        self.token = token
    }

    /// What one `sync()` did.
    public struct Report: Sendable {
        public var pushed = SettleReport()
        public var batches = 0
        public var pulled = 0
        /// Pulls started over from an empty cursor (`410 cursor_expired`).
        public var pullsStartedOver = 0
        /// What the engine found about the server's history, in order.
        public var timelineEvents: [TimelineEvent] = []
        /// The trace id every request of this sync sent (`traceparent`): where the server
        /// traces, the id to look its traces up by (log it, show it in a support screen).
        public var traceID = ""
    }

    /// The server's `410` saying its history changed under this device.
    struct TimelineChange: Error {
        let code: String
        let epoch: String?
        let highWaterMark: Int64?

        init?(status: Int, body: Data) {
            guard status == 410, let error = SyncEngine.errorObject(body),
                case .string(let code)? = error["code"], code == "reset_required" || code == "account_restarted"
            else { return nil }
            self.code = code
            if case .string(let text)? = error["epoch"] { epoch = text } else { epoch = nil }
            if case .number(let mark)? = error["highWaterMark"] { highWaterMark = Int64(exactly: mark) } else { highWaterMark = nil }
            if code == "reset_required", highWaterMark == nil { return nil }
        }
    }

    /// How many times one `sync()` follows the server's history changing before it gives up
    /// (a restore and an account restart at once is two).
    static let timelineChangesPerSync = 3

    public func sync() async throws -> Report {
        let trace = SyncTrace()
        return try await SyncTrace.$current.withValue(trace) {
            var report = Report()
            report.traceID = trace.traceID
            return try await sync(into: report)
        }
    }

    private func sync(into report: Report) async throws -> Report {
        var report = report
        var changes = 0
        while true {
            do {
                try await pushOutbox(&report)
                try await pullToEnd(&report)
                return report
            } catch let change as TimelineChange {
                changes += 1
                guard changes <= Self.timelineChangesPerSync else { throw SyncError.refused(status: 410, code: change.code) }
                if let mark = change.highWaterMark {
                    let requeued = try store.prepareRepush(highWaterMark: mark, epoch: change.epoch)
                    tell(.serverRestored(highWaterMark: mark, requeued: requeued), &report)
                } else if try store.hasNeverSynced() {
                    // Nothing here came from the account that was erased: push it again, in the
                    // account's epoch.
                    try store.adoptEpoch(change.epoch)
                } else {
                    tell(.accountRestarted(discarded: try store.discardAccount(epoch: change.epoch)), &report)
                }
            }
        }
    }

    private func tell(_ event: TimelineEvent, _ report: inout Report) {
        report.timelineEvents.append(event)
        log(event.logLine)
        onTimelineEvent?(event)
    }

    private func pushOutbox(_ report: inout Report) async throws {
        while let batch = try store.nextBatch(maximumChanges: maximumChanges) {
            let (body, response) = try await send("POST", path: "v1/sync/push", body: batch.body)
            if let change = TimelineChange(status: response.statusCode, body: body) { throw change }
            guard response.statusCode == 200 else { throw Self.error(response, body: body) }
            let settled = try store.settle(batch, responseBody: body)
            onSettled?(settled)
            report.pushed.add(settled)
            report.batches += 1
        }
    }

    /// Pages to the end; the last page's digests are checked, and a copy that differs is
    /// pulled again from scratch (once per sync).
    private func pullToEnd(_ report: inout Report) async throws {
        var hasMore = true, repaired = false
        let window = historyDays.map { LocalDate(dayNumber: LocalDate(Date(), in: calendarZone).dayNumber - (max($0, 1) - 1)) }
        try store.setHistoryFrom(window)
        while hasMore {
            var path = "v1/sync/pull?limit=\(pageSize)"
            let cursor = try store.pullCursor()
            if let cursor { path += "&cursor=" + (cursor.addingPercentEncoding(withAllowedCharacters: Self.cursorCharacters) ?? "") }
            if let window { path += "&historyFrom=\(window)" }
            let (body, response) = try await send("GET", path: path, body: nil)
            if let change = TimelineChange(status: response.statusCode, body: body) { throw change }
            if response.statusCode == 410, cursor != nil, Self.error(response, body: body) != .accountErased {
                // The cursor is older than the purge horizon: start over (once; without a
                // cursor there is nothing to expire).
                try store.resetPullCursor()
                report.pullsStartedOver += 1
                continue
            }
            guard response.statusCode == 200 else { throw Self.error(response, body: body) }
            guard case .object(let page) = try JSONParser.parse(body), case .array(let items)? = page["changes"],
                case .string(let cursor)? = page["cursor"], case .bool(let more)? = page["hasMore"]
            else { throw SyncProtocolError.malformedResponse }
            let changes = items.compactMap { item -> [String: JSONValue]? in if case .object(let change) = item { change } else { nil } }
            var epoch: String?
            if case .string(let text)? = page["epoch"] { epoch = text }
            var phase: String?, remaining = 0, later = 0
            if case .object(let progress)? = page["progress"] {
                if case .string(let text)? = progress["phase"] { phase = text }
                if case .number(let number)? = progress["remaining"] { remaining = Int(exactly: number) ?? 0 }
                if case .number(let number)? = progress["later"] { later = Int(exactly: number) ?? 0 }
            }
            let reached = PullProgress.phase(pagePhase: phase, hasMore: more)
            report.pulled += try store.storePulledPage(changes: changes, cursor: cursor, isLast: !more, epoch: epoch, phase: reached)
            onProgress?(PullProgress(phase: reached, remaining: remaining, later: later, pulled: report.pulled))
            hasMore = more
            if !more, let window { try store.dropHistory(before: window) }
            if !more, case .object(let digests)? = page["digests"] {
                var digestWindow: LocalDate?
                if case .string(let text)? = page["historyFrom"] { digestWindow = LocalDate(text) }
                let mismatched = try store.mismatchedDigests(try Self.digests(digests), window: digestWindow)
                if !mismatched.isEmpty {
                    tell(.repaired(collections: mismatched, persisted: repaired), &report)
                    if !repaired {
                        repaired = true
                        try store.resetPullCursor()
                        hasMore = true
                    }
                }
            }
        }
    }

    /// A last page's `digests`: `{"habits": {"count": 3, "hash": "<16 hex digits>"}, …}`.
    static func digests(_ fields: [String: JSONValue]) throws -> [SyncCollection: RecordDigest] {
        var digests: [SyncCollection: RecordDigest] = [:]
        for (name, value) in fields {
            guard let collection = SyncCollection(rawValue: name) else { continue }  // one a newer server digests
            guard case .object(let digest) = value, case .number(let count)? = digest["count"], let whole = Int64(exactly: count),
                case .string(let hash)? = digest["hash"], let parsed = RecordDigest(count: whole, hashText: hash)
            else { throw SyncProtocolError.malformedResponse }
            digests[collection] = parsed
        }
        return digests
    }

    /// The server's event stream for this user (`GET /v1/sync/events`): a `change` or `pull`
    /// event means "pull now". `lastEventID` (the `id:` of the last event seen) makes a
    /// device that fell behind get an event at once. Cancelling the consumer closes it.
    public func serverEvents(lastEventID: String? = nil) async throws -> AsyncThrowingStream<ServerSentEvent, any Error> {
        var request = try await authorizedRequest("GET", path: "v1/sync/events")
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        if let lastEventID { request.setValue(lastEventID, forHTTPHeaderField: "Last-Event-ID") }
        return ServerSentEventReader.messages(request)
    }

    /// `sync()`, tried again after a network failure or a `429`/`503`, waiting as `policy`
    /// says, up to its attempts; then the last error. The persisted batch makes every retry
    /// send the same bytes.
    public func syncRetrying(
        policy: RetryPolicy = RetryPolicy(),
        sleep: @Sendable (Double) async throws -> Void = { try await Task.sleep(for: .seconds($0)) }
    ) async throws -> Report {
        var attempt = 0
        while true {
            do {
                return try await sync()
            } catch let error where attempt + 1 < policy.maximumAttempts && Self.isWorthRetrying(error) {
                var retryAfter: Double?
                if case .retryLater(let seconds)? = error as? SyncError { retryAfter = seconds }
                try await sleep(policy.delay(attempt: attempt, retryAfter: retryAfter, random: Double.random(in: 0...1)))
                attempt += 1
            }
        }
    }

    static func isWorthRetrying(_ error: any Error) -> Bool {
        if case .retryLater? = error as? SyncError { return true }
        return error is URLError
    }

    /// A request to `path` under the base URL, with the token and the device id.
    private func authorizedRequest(_ method: String, path: String) async throws -> URLRequest {
        guard let url = URL(string: path, relativeTo: baseURL) else { throw SyncProtocolError.malformedResponse }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("Bearer \(try await token())", forHTTPHeaderField: "Authorization")
        request.setValue(store.deviceID, forHTTPHeaderField: "X-Device-Id")
        // A request outside a sync (the event stream, the account's) is a trace of its own.
        request.setValue((SyncTrace.current ?? SyncTrace()).traceParent(), forHTTPHeaderField: "traceparent")
        return request
    }

    func send(_ method: String, path: String, body: Data?) async throws -> (Data, HTTPURLResponse) {
        var request = try await authorizedRequest(method, path: path)
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        return try await transport.send(request)
    }

    /// Cursors are opaque: everything but unreserved characters is percent-encoded.
    static let cursorCharacters = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// The `error` object of an error answer (`{"error": {"code", "message", …}}`).
    static func errorObject(_ body: Data) -> [String: JSONValue]? {
        guard case .object(let fields)? = try? JSONParser.parse(body), case .object(let error)? = fields["error"] else { return nil }
        return error
    }

    static func error(_ response: HTTPURLResponse, body: Data) -> SyncError {
        var code: String?
        if case .string(let text)? = errorObject(body)?["code"] { code = text }
        switch response.statusCode {
        case 401: return .unauthorized(code: code)
        case 429, 503:
            return .retryLater(seconds: response.value(forHTTPHeaderField: "Retry-After").flatMap(Double.init) ?? 1)
        default:
            if response.statusCode == 410, code == "account_erased" { return .accountErased }
            return .refused(status: response.statusCode, code: code)
        }
    }

    // MARK: - The account

    /// Everything the server holds for this user, as the JSON document of
    /// `GET /v1/account/export` (docs/accounts.md), for a "download my data" screen. A
    /// document cut short (no `"complete": true` trailer, or counts that differ from what it
    /// holds) throws `SyncProtocolError.incompleteExport`: export again.
    public func exportAccount() async throws -> Data {
        let (body, response) = try await send("GET", path: "v1/account/export", body: nil)
        guard response.statusCode == 200 else { throw Self.error(response, body: body) }
        guard Self.isCompleteExport(body) else { throw SyncProtocolError.incompleteExport }
        return body
    }

    /// Whether an export document is whole: its trailer says so and counts every section.
    static func isCompleteExport(_ body: Data) -> Bool {
        guard case .object(let document)? = try? JSONParser.parse(body, limits: .administrativeFile), case .bool(true)? = document["complete"],
            case .object(let counts)? = document["counts"], !counts.isEmpty
        else { return false }
        return counts.allSatisfy { section, count in
            guard case .array(let items)? = document[section], case .number(let expected) = count else { return false }
            return Double(items.count) == expected
        }
    }

    /// Erases the user's account on the server (`DELETE /v1/account`): every record of every
    /// device, for good. Returns the rows erased per table. Then erase the local store
    /// (`LocalStore.erase(path:)`) and sign out; the user's other devices get
    /// `SyncError.accountErased` on their next sync. Pending edits are not pushed first.
    @discardableResult
    public func deleteAccount() async throws -> [String: Int] {
        let (body, response) = try await send("DELETE", path: "v1/account", body: nil)
        guard response.statusCode == 200 else { throw Self.error(response, body: body) }
        guard case .object(let answer) = try JSONParser.parse(body), case .object(let rows)? = answer["rows"] else {
            throw SyncProtocolError.malformedResponse
        }
        return rows.compactMapValues { value in if case .number(let count) = value { Int(count) } else { nil } }
    }
}
