import CLibPQ
import Foundation
import NIOPosix
import Synchronization

/// One PostgreSQL connection. libpq's handle is not thread-safe, so it lives inside a `Mutex`
/// and every call that may block runs on the pool's `NIOThreadPool`, never on an event loop or
/// Swift's cooperative pool. Results are copied into Sendable values before `PQclear`.
///
/// Connections are lent by `PGPool.withConnection` / `withTransaction` and must not escape.
public final class PGConnection: Sendable {
    /// Owns the libpq handle. Not Sendable: only ever touched inside `PGConnection.handle`'s lock.
    final class Handle {
        var pointer: OpaquePointer?
        /// Statements prepared on this session.
        var prepared = PreparedStatements()
        /// Fixed commands (a transaction's `BEGIN` and `SET LOCAL`s) not sent yet: they go in
        /// the same round trip as the first statement that needs the server (`deferCommands`).
        var prelude: [PGQuery] = []
        /// Statements whose results nobody reads, sent (prepared, like any other) in the same
        /// round trip as the next statement, after the prelude (`deferStatements`).
        var deferred: [PGQuery] = []
        var hasPending: Bool { !prelude.isEmpty || !deferred.isEmpty }

        /// The prelude and deferred statements, now to be sent; the queues are empty after.
        func takePending() -> (prelude: [PGQuery], deferred: [PGQuery]) {
            defer { (prelude, deferred) = ([], []) }
            return (prelude, deferred)
        }
        /// Whether a statement has returned its result to the caller since the lease: until
        /// then a transaction that failed on a dead connection can start again elsewhere.
        var deliveredResult = false
        /// The last pipeline committed the transaction (`pipeline(_:commit:)`).
        var committed = false
        /// The relations this lease's statements name by other names (`PGPool.withTransaction`).
        var relationNames: PGRelationNames?
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
    }

    let handle: Mutex<Handle>
    let threadPool: NIOThreadPool
    /// The backend's process id, for `pg_terminate_backend` in tests and for logs.
    public let backendPID: Int32
    let broken = Atomic<Bool>(false)
    let statementCounter: StatementCounter?
    let namedPreparedStatements: Bool
    /// Kept as long as the handle: libpq holds a pointer to it (`PGNoticeSink.install`).
    private let notices: PGNoticeSink
    /// Where a transaction's body runs (`PGPool.withTransaction`): libpq calls made there
    /// block its queue instead of hopping to the thread pool.
    let executor: ConnectionExecutor

    private init(
        handle: sending Handle, backendPID: Int32, threadPool: NIOThreadPool, statementCounter: StatementCounter?, namedPreparedStatements: Bool,
        notices: PGNoticeSink
    ) {
        self.statementCounter = statementCounter
        self.notices = notices
        self.namedPreparedStatements = namedPreparedStatements
        self.handle = Mutex(handle)
        self.backendPID = backendPID
        self.threadPool = threadPool
        self.executor = ConnectionExecutor(label: "habitsync.postgresql.\(backendPID)")
    }

    /// Opens a connection (on the thread pool) and prepares its session: UTC, ISO dates,
    /// UTF-8, the configured settings and role.
    public static func connect(_ configuration: PGConnectionConfiguration, threadPool: NIOThreadPool, statementCounter: StatementCounter? = nil) async throws -> PGConnection {
        let connection: PGConnection = try await threadPool.runIfActive {
            let pointer = try openHandle(configuration)
            return PGConnection(
                handle: Handle(pointer), backendPID: PQbackendPID(pointer), threadPool: threadPool, statementCounter: statementCounter,
                namedPreparedStatements: configuration.namedPreparedStatements, notices: configuration.notices)
        }
        // Through a transaction pooler the session is not ours: nothing is set on it (every
        // transaction sets what it needs, `PGPool.withTransaction`).
        if !configuration.transactionPooling {
            do {
                try await connection.simpleQuery(unsafeSQL: configuration.sessionSetupSQL())
            } catch {
                connection.close()
                throw error
            }
        }
        return connection
    }

    /// True once a call found the connection unusable; the pool then discards it.
    public var isBroken: Bool { broken.load(ordering: .relaxed) }

    /// Checks, without a round trip, that the server has not closed the connection while it
    /// sat idle (a terminated backend sends an error and closes its socket).
    func isAliveWhileIdle() -> Bool {
        if isBroken { return false }
        let alive = handle.withLock { handle -> Bool in
            guard let pointer = handle.pointer, PQstatus(pointer) == CONNECTION_OK else { return false }
            // Readable while idle means a notice or the server going away (an error message
            // and then end-of-file). Consume until nothing is left: reading the end-of-file
            // is what makes libpq notice the connection is gone.
            for _ in 0..<4 {
                var descriptor = pollfd(fd: PQsocket(pointer), events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, 0)
                if ready < 0 { return false }
                if ready == 0 { return PQstatus(pointer) == CONNECTION_OK && PQtransactionStatus(pointer) == PQTRANS_IDLE }
                guard PQconsumeInput(pointer) == 1, PQstatus(pointer) == CONNECTION_OK else { return false }
            }
            return false
        }
        if !alive { broken.store(true, ordering: .relaxed) }
        return alive
    }

    /// Whether the session is idle outside a transaction (after a clean commit or rollback).
    func isIdleOutsideTransaction() -> Bool {
        handle.withLock { handle in
            guard let pointer = handle.pointer else { return false }
            return PQtransactionStatus(pointer) == PQTRANS_IDLE
        }
    }

    func markBroken() { broken.store(true, ordering: .relaxed) }

    /// Closes the connection. `PQfinish` only sends a terminate message, so it does not block.
    func close() {
        broken.store(true, ordering: .relaxed)
        handle.withLock { handle in
            if let pointer = handle.pointer {
                PQfinish(pointer)
                handle.pointer = nil
            }
        }
    }

    deinit {
        handle.withLock { handle in
            if let pointer = handle.pointer { PQfinish(pointer) }
        }
    }

    // MARK: - Running libpq calls

    /// Runs a blocking libpq call with the handle locked: inline when the caller is on this
    /// connection's own queue (a transaction's body, `ConnectionExecutor`), on the thread pool
    /// otherwise; a failure that shows the connection is gone marks it broken.
    func blockingCall<Result: Sendable>(_ body: @escaping @Sendable (Handle, OpaquePointer) throws -> Result) async throws -> Result {
        if isBroken { throw PGError(kind: .connection, message: "the connection is closed") }
        statementCounter?.increment()
        do {
            // In a transaction's body the caller runs on this connection's own queue: the
            // call blocks it there, with no hop to the pool's thread and back.
            if executor.isCurrent { return try withHandle(body) }
            return try await threadPool.runIfActive { [self] in try withHandle(body) }
        } catch let error as PGError {
            // A Citus coordinator relays a worker it cannot reach as a server error of class 08
            // on a connection that is itself fine: that connection is kept.
            let statusOK = statusIsOK()
            let relayedFromAnotherNode = error.kind == .server && error.sqlState?.errorClass == "08" && statusOK
            if (error.isConnectionFailure && !relayedFromAnotherNode) || !statusOK { markBroken() }
            throw error
        }
    }

    private func withHandle<Result: Sendable>(_ body: @Sendable (Handle, OpaquePointer) throws -> Result) throws -> Result {
        try handle.withLock { handle -> Result in
            guard let pointer = handle.pointer else {
                throw PGError(kind: .connection, message: "the connection is closed")
            }
            return try body(handle, pointer)
        }
    }

    func statusIsOK() -> Bool {
        handle.withLock { handle in
            guard let pointer = handle.pointer else { return false }
            return PQstatus(pointer) == CONNECTION_OK
        }
    }

}

/// Opens a libpq connection (blocking): the configuration's string, timeout, application name
/// (with `applicationSuffix`) and UTF-8, its notices to the configuration's sink. The caller
/// owns the handle and keeps the sink alive as long.
func openHandle(_ configuration: PGConnectionConfiguration, applicationSuffix: String = "") throws -> OpaquePointer {
    // Earlier keywords are defaults the connection string may override; later ones win.
    var keywords = ["connect_timeout", "fallback_application_name", "dbname", "client_encoding"]
    var values = [String(configuration.connectTimeoutSeconds), configuration.applicationName + applicationSuffix, configuration.connectionString, "UTF8"]
    if let node = configuration.node {
        keywords += ["host", "port"]
        values += [node.host, String(node.port)]
    }
    guard let pointer = withCStrings(keywords, { keys in withCStrings(values) { PQconnectdbParams(keys, $0, 1) } }) else {
        throw PGError(kind: .connection, message: "out of memory while connecting")
    }
    guard PQstatus(pointer) == CONNECTION_OK else {
        let message = String(cString: PQerrorMessage(pointer)).trimmingTrailingNewlines()
        PQfinish(pointer)
        throw PGError(kind: .connection, message: message.isEmpty ? "could not connect" : message)
    }
    configuration.notices.install(on: pointer)
    return pointer
}

/// Calls `body` with a NULL-terminated array of C strings that live for the call.
func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let duplicates = strings.map { strdup($0) }
    defer { duplicates.forEach { free($0) } }
    let pointers: [UnsafePointer<CChar>?] = duplicates.map { $0.map { UnsafePointer($0) } } + [nil]
    // Never empty (the terminating nil), so it has an address.
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
