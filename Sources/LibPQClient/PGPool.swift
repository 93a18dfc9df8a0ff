import Logging
import NIOPosix
import ServiceLifecycle
import Synchronization
import Tracing

/// A fixed-size pool of PostgreSQL connections, run as a ServiceLifecycle service.
///
/// Connections are lent inside `withConnection { }` / `withTransaction { }`. A lease waits
/// while every connection is in use. A connection found broken (by a failed call, or by the
/// idle check on lease) is closed, never returned to the pool, and replaced on a later lease.
public final class PGPool: Service, Sendable {
    public struct Configuration: Sendable {
        public var connection: PGConnectionConfiguration
        public var maximumConnections: Int
        /// How long a lease waits for a busy pool before it fails with `LeaseTimeout`; nil
        /// waits as long as it takes (admin commands).
        public var leaseTimeout: Duration?

        public init(connection: PGConnectionConfiguration, maximumConnections: Int = 10, leaseTimeout: Duration? = nil) {
            // A programming error, not input: every caller validates the configured size (1–500).
            precondition(maximumConnections > 0, "a pool needs at least one connection")
            self.connection = connection
            self.maximumConnections = maximumConnections
            self.leaseTimeout = leaseTimeout
        }
    }

    /// A lease waited `leaseTimeout` for a connection and got none.
    public struct LeaseTimeout: Error, Sendable, CustomStringConvertible {
        public let waited: Duration
        public var description: String { "no database connection became free within \(waited)" }
    }

    /// Counts for the `/metrics` gauges.
    public struct Statistics: Sendable, Equatable {
        public var open: Int
        public var inUse: Int
        public var idle: Int
        public var waiting: Int
        /// Connections that failed to open or broke while in use, since start.
        public var errors: Int
    }

    public enum IsolationLevel: String, Sendable {
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        case serializable = "SERIALIZABLE"
    }

    private enum Grant {
        case connection(PGConnection)
        case openNew
    }

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Grant, any Error>
    }

    private struct State {
        var idle: [PGConnection] = []
        var open = 0
        var waiters: [Waiter] = []
        var nextWaiterID: UInt64 = 0
        var closed = false
        var errors = 0
    }

    public let configuration: Configuration
    /// Round trips made through this pool's connections (BEGIN and COMMIT included).
    public let roundTrips = StatementCounter()
    private let state = Mutex(State())
    private let threadPool: NIOThreadPool
    private let logger: Logger

    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        // One thread per connection: each blocking call holds its thread for the call.
        self.threadPool = NIOThreadPool(numberOfThreads: configuration.maximumConnections)
        threadPool.start()
    }

    public var statistics: Statistics {
        state.withLock { state in
            Statistics(
                open: state.open, inUse: state.open - state.idle.count, idle: state.idle.count,
                waiting: state.waiters.count, errors: state.errors)
        }
    }

    /// Lends a connection for the duration of `body`. Through a transaction pooler the
    /// session has no role or settings of ours, so `body` runs in a transaction that sets them.
    @discardableResult
    public func withConnection<Result>(_ body: (PGConnection) async throws -> Result) async throws -> Result {
        if configuration.connection.transactionPooling { return try await withTransaction(body) }
        let connection = try await lease()
        do {
            let result = try await body(connection)
            release(connection)
            return result
        } catch {
            release(connection)
            throw error
        }
    }

    /// Runs `body` inside a transaction: committed when it returns (or by its last pipeline,
    /// `PGConnection.pipeline(_:commit:)`), rolled back when it throws. `statementTimeout`
    /// applies to each statement of this transaction only (`SET LOCAL statement_timeout`). The
    /// role, time zone, date style and settings are set with `SET LOCAL` too, with `BEGIN`, and
    /// all of them are sent in the same round trip as the body's first statement: nothing the
    /// transaction depends on comes from the session, which a transaction pooler shares with
    /// other clients. A connection that turns out to be dead in that first round trip is
    /// replaced and the transaction started again, since nothing has run yet. `role: .login` runs it as the login role instead of
    /// the configured one. `localSettings` (fixed `SET LOCAL` commands, never input) go in the
    /// same round trip as well, each command a statement of its own (`PGConnection.commands`).
    @discardableResult
    public func withTransaction<Result>(
        isolation: IsolationLevel = .readCommitted,
        readOnly: Bool = false,
        statementTimeout: Duration? = nil,
        role: TransactionRole = .configured,
        localSettings: [PGLocalSetting] = [],
        relationNames: PGRelationNames? = nil,
        _ body: (PGConnection) async throws -> Result
    ) async throws -> Result {
        let begin = ["BEGIN ISOLATION LEVEL \(isolation.rawValue)" + (readOnly ? " READ ONLY" : "")]
        var settings: [PGLocalSetting] = []
        if let statementTimeout {
            settings.append(PGLocalSetting("statement_timeout", String(max(1, Int64(statementTimeout / .milliseconds(1))))))
        }
        settings += configuration.connection.transactionSettings(role: role) + localSettings
        // One statement for every setting (the values bound), unless they must be commands.
        let asCommands = configuration.connection.localSettingsAsCommands
        return try await withSpanWhenTraced("db.transaction", ofKind: .client) { span in
            DatabaseSpan.describe(span)
            return try await transaction(begin: begin, settings: settings, asCommands: asCommands, relationNames: relationNames, body)
        }
    }

    /// `withTransaction`'s attempts: a new one where the first round trip found the
    /// connection dead.
    private func transaction<Result>(
        begin: [String], settings: [PGLocalSetting], asCommands: Bool, relationNames: PGRelationNames?,
        _ body: (PGConnection) async throws -> Result
    ) async throws -> Result {
        var attempt = 0
        while true {
            attempt += 1
            let connection = try await lease()
            // BEGIN and the settings go with the transaction's first statement (one round trip
            // fewer); a transaction whose body sends nothing costs none.
            connection.useRelationNames(relationNames)
            connection.deferCommands(unsafeSQL: asCommands ? begin + settings.map(\.command) : begin)
            if !asCommands { try connection.deferStatements([PGLocalSetting.oneStatement(settings)]) }
            // The body runs on the connection's own queue (`ConnectionExecutor`): its statements
            // block there instead of each hopping to the thread pool and back.
            let executor = configuration.maximumConnections <= ConnectionExecutor.largestPool ? connection.executor : nil
            let outcome: TransactionAttempt<Result> = try await withTaskExecutorPreference(executor) {
                do {
                    let result = try await body(connection)
                    if !connection.takeCommitted() { try await connection.simpleQuery(unsafeSQL: "COMMIT") }
                    release(connection)
                    return .done(result)
                } catch let error as PGError where error.isConnectionFailure && !connection.hasDeliveredResult && attempt < 3 {
                    // The connection was dead before anything ran (its first round trip carried
                    // BEGIN): nothing happened, so the transaction starts again on another.
                    release(connection)
                    return .again
                } catch {
                    if !connection.isBroken {
                        _ = try? await connection.simpleQuery(unsafeSQL: "ROLLBACK")
                    }
                    release(connection)
                    throw error
                }
            }
            if case .done(let result) = outcome { return result }
        }
    }

    // MARK: - Service

    /// Serves until graceful shutdown or cancellation, then closes every connection.
    public func run() async throws {
        // Suspends until graceful shutdown is triggered (or the task is cancelled).
        try? await gracefulShutdown()
        close()
    }

    /// Closes idle connections now and in-use ones as they come back; fails waiting leases.
    public func close() {
        let (idle, waiters): ([PGConnection], [Waiter]) = state.withLock { state in
            guard !state.closed else { return ([], []) }
            state.closed = true
            let idle = state.idle
            state.open -= idle.count
            state.idle = []
            let waiters = state.waiters
            state.waiters = []
            return (idle, waiters)
        }
        idle.forEach { $0.close() }
        waiters.forEach { $0.continuation.resume(throwing: PGError.client("the connection pool is closed")) }
        if !idle.isEmpty || !waiters.isEmpty {
            logger.debug("connection pool closed", metadata: ["closed_connections": "\(idle.count)"])
        }
    }

    /// A pool for the duration of `body` (a command, a test): closed and its threads stopped
    /// afterwards, whether `body` returns or throws. Long-running servers run the pool as a
    /// service instead.
    @discardableResult
    public static func withPool<Result>(
        _ configuration: Configuration, logger: Logger, _ body: (PGPool) async throws -> Result
    ) async throws -> Result {
        let pool = PGPool(configuration: configuration, logger: logger)
        do {
            let result = try await body(pool)
            pool.close()
            await pool.shutdownThreads()
            return result
        } catch {
            pool.close()
            await pool.shutdownThreads()
            throw error
        }
    }

    /// Stops the pool's threads; call once after `close()` when nothing uses the pool any more.
    public func shutdownThreads() async {
        try? await threadPool.shutdownGracefully()
    }

    // MARK: - Leasing

    private func lease() async throws -> PGConnection {
        while true {
            let grant = try await nextGrant()
            switch grant {
            case .connection(let connection):
                if connection.isAliveWhileIdle() { return connection }
                discard(connection, countAsError: true)
            case .openNew:
                do {
                    return try await PGConnection.connect(configuration.connection, threadPool: threadPool, statementCounter: roundTrips)
                } catch {
                    slotFreed(countAsError: true)
                    throw error
                }
            }
        }
    }

    private func nextGrant() async throws -> Grant {
        enum Decision { case grant(Grant), wait(UInt64), closed }
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Grant, any Error>) in
                let decision = state.withLock { state -> Decision in
                    if state.closed { return .closed }
                    if let connection = state.idle.popLast() { return .grant(.connection(connection)) }
                    if state.open < configuration.maximumConnections {
                        state.open += 1
                        return .grant(.openNew)
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return .wait(id)
                }
                switch decision {
                case .grant(let grant): continuation.resume(returning: grant)
                case .closed: continuation.resume(throwing: PGError.client("the connection pool is closed"))
                case .wait(let id):
                    if let timeout = configuration.leaseTimeout { expire(waiter: id, after: timeout) }
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Fails waiter `id` with `LeaseTimeout` if it is still waiting after `timeout`.
    private func expire(waiter id: UInt64, after timeout: Duration) {
        Task { [weak self] in
            try? await Task.sleep(for: timeout)
            let waiter = self?.state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: LeaseTimeout(waited: timeout))
        }
    }

    private func release(_ connection: PGConnection) {
        // Deferred commands never sent (a transaction that ran nothing) are forgotten.
        connection.discardPending()
        if connection.isBroken || !connection.isIdleOutsideTransaction() {
            discard(connection, countAsError: connection.isBroken)
            return
        }
        let action = state.withLock { state -> (Waiter?, Bool) in
            if state.closed {
                state.open -= 1
                return (nil, true)
            }
            if !state.waiters.isEmpty { return (state.waiters.removeFirst(), false) }
            state.idle.append(connection)
            return (nil, false)
        }
        if action.1 { connection.close() }
        action.0?.continuation.resume(returning: .connection(connection))
    }

    private func discard(_ connection: PGConnection, countAsError: Bool) {
        connection.close()
        if countAsError {
            logger.warning("discarding a broken database connection", metadata: ["backend_pid": "\(connection.backendPID)"])
        }
        slotFreed(countAsError: countAsError)
    }

    /// A connection slot became free: hand it to the first waiter, who opens a new connection.
    private func slotFreed(countAsError: Bool) {
        let waiter = state.withLock { state -> Waiter? in
            if countAsError { state.errors += 1 }
            if !state.closed, !state.waiters.isEmpty { return state.waiters.removeFirst() }
            state.open -= 1
            return nil
        }
        waiter?.continuation.resume(returning: .openNew)
    }
}

/// One try of `PGPool.withTransaction`: its result, or "start again on another connection".
private enum TransactionAttempt<Value> {
    case done(Value)
    case again
}
