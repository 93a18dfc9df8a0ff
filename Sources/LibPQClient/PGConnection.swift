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
        /// Statements prepared on this session: SQL text and parameter types → statement name.
        var prepared: [StatementKey: String] = [:]
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
        /// What `prepared` is keyed by: the same text with other parameter types is another
        /// statement. The query's pieces (the text between its placeholders) stand for its text:
        /// hashed as they are, not joined into the SQL and a string of types on every execution.
        struct StatementKey: Hashable {
            let pieces: [String]
            let types: [Oid]
        }
        static func key(_ query: PGQuery, types: [Oid]) -> StatementKey {
            StatementKey(pieces: query.pieces, types: types)
        }
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
    }

    /// Prepared statements kept per session before the cache starts over.
    static let preparedLimit = 256

    private let handle: Mutex<Handle>
    private let threadPool: NIOThreadPool
    /// The backend's process id, for `pg_terminate_backend` in tests and for logs.
    public let backendPID: Int32
    private let broken = Atomic<Bool>(false)
    private let statementCounter: StatementCounter?
    private let namedPreparedStatements: Bool
    /// Kept as long as the handle: libpq holds a pointer to it (`PGNoticeSink.install`).
    private let notices: PGNoticeSink

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

    /// Runs one statement with its parameters (extended protocol, text results). Each
    /// distinct statement is prepared once per session and executed by name afterwards: the
    /// push statements are long, and parsing and planning them anew each time was most of
    /// PostgreSQL's work under load.
    @discardableResult
    public func query(_ query: PGQuery) async throws -> PGResult {
        try Self.refuseNULInText(query.binds)
        statementCounter?.note(query)
        let named = namedPreparedStatements
        return try await onThreadPoolWithHandle { handle, pointer in
            let result: PGResult
            if handle.hasPending {
                let (prelude, deferred) = handle.takePending()
                guard let last = try Self.runPipeline(prelude: prelude, deferred: deferred, [query], named: named, handle: handle, on: pointer).last else {
                    throw PGError.client("a statement returned no result")
                }
                result = last
            } else if named {
                result = try Self.executePrepared(query, handle: handle, on: pointer)
            } else {
                result = try Self.executeUnnamed(query, on: pointer)
            }
            handle.deliveredResult = true
            return result
        }
    }

    /// Runs SQL text through the simple query protocol: several statements separated by `;`,
    /// no parameters. For migrations and fixed session commands only; never for input. A
    /// `COMMIT` or `ROLLBACK` of a transaction whose deferred `BEGIN` was never sent (nothing
    /// ran in it) costs no round trip.
    @discardableResult
    public func simpleQuery(unsafeSQL sql: String) async throws -> PGResult {
        // Nothing sent yet (the transaction never began): COMMIT and ROLLBACK have nothing to
        // end. A ROLLBACK drops deferred statements too.
        if sql == "COMMIT" || sql == "ROLLBACK", discardPendingIfNotBegun(droppingDeferred: sql == "ROLLBACK") {
            return PGResult(columns: [], cells: [], affectedRows: nil, commandTag: sql)
        }
        let named = namedPreparedStatements
        return try await onThreadPoolWithHandle { handle, pointer in
            if handle.hasPending {
                let (prelude, deferred) = handle.takePending()
                _ = try Self.runPipeline(prelude: prelude, deferred: deferred, [], named: named, handle: handle, on: pointer)
            }
            guard let result = PQexec(pointer, sql) else { throw Self.connectionError(pointer) }
            defer { PQclear(result) }
            let copied = try Self.copy(result, pointer)
            handle.deliveredResult = true
            return copied
        }
    }

    /// Queues fixed commands (never input) to be sent in the same round trip as the next
    /// statement: a transaction's `BEGIN` and `SET LOCAL`s cost no round trip of their own.
    /// `PGPool.withTransaction` uses it; `commands` adds to the queue while it is not empty.
    public func deferCommands(_ commands: [String]) {
        handle.withLock { handle in
            handle.prelude += commands.map { PGQuery(unsafeSQL: $0) }
            handle.deliveredResult = false
            handle.committed = false
        }
    }

    /// Queues statements whose results nobody reads (never fixed text built from input: they
    /// are parameterised like any other) to be sent, in order, with the next statement of this
    /// connection, in the same round trip; an error in one of them is that statement's error.
    /// `PGPool.withTransaction`'s COMMIT sends whatever is still queued.
    public func deferStatements(_ queries: [PGQuery]) throws {
        for query in queries {
            try Self.refuseNULInText(query.binds)
            statementCounter?.note(query)
        }
        handle.withLock { $0.deferred += queries }
    }

    /// When the deferred BEGIN was never sent (nothing ran): forgets it and what was queued
    /// behind it (deferred statements only when `droppingDeferred`), and says true.
    func discardPendingIfNotBegun(droppingDeferred: Bool) -> Bool {
        handle.withLock { handle in
            guard !handle.prelude.isEmpty, droppingDeferred || handle.deferred.isEmpty else {
                if droppingDeferred { handle.deferred = [] }
                return false
            }
            _ = handle.takePending()
            return true
        }
    }

    /// Forgets everything queued that was never sent (a lease ends).
    func discardPending() {
        handle.withLock { _ = $0.takePending() }
    }

    /// Whether a statement has returned a result since `deferCommands` (`PGPool` restarts a
    /// transaction that failed on a dead connection before that).
    var hasDeliveredResult: Bool { handle.withLock { $0.deliveredResult } }

    /// Whether `pipeline(_:commit:)` committed the transaction (then it is not committed again).
    func takeCommitted() -> Bool {
        handle.withLock { handle in
            defer { handle.committed = false }
            return handle.committed
        }
    }

    /// Runs fixed commands (`BEGIN`, `SET LOCAL …`; never input) in one round trip, each as a
    /// statement of its own, unnamed, so each arrives with its own text. Citus copies the text
    /// of every `SET LOCAL` it propagates onto the transaction's worker connections; sent as
    /// one multi-statement string, each `SET` carried the whole string there, `BEGIN`
    /// included: every worker answered each request with `there is already a transaction in
    /// progress` (20,041 warnings in one run of the Citus target).
    public func commands(_ commands: [String]) async throws {
        if commands.isEmpty { return }
        let queries = commands.map { PGQuery(unsafeSQL: $0) }
        // Behind a deferred BEGIN, these wait for the next statement too.
        let deferred = handle.withLock { handle -> Bool in
            guard !handle.prelude.isEmpty else { return false }
            handle.prelude += queries
            return true
        }
        if deferred { return }
        try await onThreadPoolWithHandle { handle, pointer in
            _ = try Self.runPipeline(prelude: queries, [], named: false, handle: handle, on: pointer)
        }
    }

    /// Sends several statements in one round trip (libpq pipeline mode) and returns their
    /// results in order. They run as one implicit transaction unless already inside one:
    /// the first failure aborts the rest and is thrown. With named prepared statements each
    /// statement is prepared once per session (inside the same pipeline the first time) and
    /// executed by name, as `query` does, so a pipeline costs no more parsing or planning than
    /// the same statements sent one by one.
    ///
    /// `commit`: the transaction's `COMMIT` goes in the same round trip, after the last
    /// statement (the pool then does not commit again); when a statement fails, it is not run.
    public func pipeline(_ queries: [PGQuery], commit: Bool = false) async throws -> [PGResult] {
        if queries.isEmpty && !commit { return [] }
        for query in queries {
            try Self.refuseNULInText(query.binds)
            statementCounter?.note(query)
        }
        let named = namedPreparedStatements
        return try await onThreadPoolWithHandle { handle, pointer in
            let (prelude, deferred) = handle.takePending()
            let results = try Self.runPipeline(prelude: prelude, deferred: deferred, queries, named: named, commit: commit, handle: handle, on: pointer)
            handle.deliveredResult = true
            if commit { handle.committed = true }
            return results
        }
    }

    /// What one pipeline sent, in order: each produces one result (or an aborted marker).
    private enum PipelineStep {
        case prepare(key: Handle.StatementKey, name: String)
        /// A statement; `returned`: its result is the caller's (not a deferred statement's).
        case execute(returned: Bool)
        /// A fixed command (the prelude, the closing COMMIT): its result is not returned.
        case command
    }

    /// Sends `prelude` (fixed commands, unnamed), the `deferred` statements, `queries`, and a
    /// `COMMIT` if asked, in one round trip; returns the results of `queries`.
    private static func runPipeline(
        prelude: [PGQuery] = [], deferred: [PGQuery] = [], _ queries: [PGQuery], named: Bool, commit: Bool = false, handle: Handle,
        on pointer: OpaquePointer
    ) throws -> [PGResult] {
        if prelude.isEmpty && deferred.isEmpty && queries.isEmpty && !commit { return [] }
        if named, handle.prepared.count + deferred.count + queries.count > preparedLimit {
            if let result = PQexec(pointer, "DEALLOCATE ALL") { PQclear(result) }
            handle.prepared.removeAll()
        }
        guard PQenterPipelineMode(pointer) == 1 else { throw connectionError(pointer) }
        defer { PQexitPipelineMode(pointer) }
        var steps: [PipelineStep] = []
        for command in prelude {
            guard PQsendQueryParams(pointer, command.sql, 0, nil, nil, nil, nil, 0) == 1 else { throw connectionError(pointer) }
            steps.append(.command)
        }
        var pending: [Handle.StatementKey: String] = [:]
        for (position, query) in (deferred + queries).enumerated() {
            let types = query.binds.map { Oid($0.type.rawValue) }
            var name: String?
            if named {
                let key = Handle.key(query, types: types)
                name = handle.prepared[key] ?? pending[key]
                if name == nil {
                    let newName = "hs_\(handle.prepared.count + pending.count)"
                    let sent = types.withUnsafeBufferPointer { typeBuffer in
                        PQsendPrepare(pointer, newName, query.sql, Int32(types.count), types.isEmpty ? nil : typeBuffer.baseAddress)
                    }
                    guard sent == 1 else { throw connectionError(pointer) }
                    steps.append(.prepare(key: key, name: newName))
                    pending[key] = newName
                    name = newName
                }
            }
            let sent = withParameters(query.binds) { types, values, lengths, formats in
                if let name {
                    return PQsendQueryPrepared(pointer, name, Int32(query.binds.count), values, lengths, formats, 0)
                }
                return PQsendQueryParams(pointer, query.sql, Int32(query.binds.count), types, values, lengths, formats, 0)
            }
            guard sent == 1 else { throw connectionError(pointer) }
            steps.append(.execute(returned: position >= deferred.count))
        }
        if commit {
            guard PQsendQueryParams(pointer, "COMMIT", 0, nil, nil, nil, nil, 0) == 1 else { throw connectionError(pointer) }
            steps.append(.command)
        }
        guard PQpipelineSync(pointer) == 1 else { throw connectionError(pointer) }
        var results: [PGResult] = []
        var firstError: (any Error)?
        for step in steps {
            var current: PGResult?
            while let result = PQgetResult(pointer) {
                defer { PQclear(result) }
                if PQresultStatus(result) == PGRES_PIPELINE_ABORTED { continue }
                do { current = try copy(result, pointer) } catch { if firstError == nil { firstError = error } }
            }
            switch step {
            case .prepare(let key, let name):
                // Only a statement the server really prepared is known by name from now on.
                if current != nil { handle.prepared[key] = name }
            case .execute(let returned):
                if returned, let current { results.append(current) }
            case .command:
                break
            }
        }
        // Drain up to and including the sync point.
        while let result = PQgetResult(pointer) {
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_PIPELINE_SYNC { break }
        }
        if let firstError { throw firstError }
        return results
    }

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

    private func onThreadPool<Result: Sendable>(_ body: @escaping @Sendable (OpaquePointer) throws -> Result) async throws -> Result {
        try await onThreadPoolWithHandle { _, pointer in try body(pointer) }
    }

    private func onThreadPoolWithHandle<Result: Sendable>(_ body: @escaping @Sendable (Handle, OpaquePointer) throws -> Result) async throws -> Result {
        if isBroken { throw PGError(kind: .connection, message: "the connection is closed") }
        statementCounter?.increment()
        do {
            return try await threadPool.runIfActive { [self] in
                try handle.withLock { handle -> Result in
                    guard let pointer = handle.pointer else {
                        throw PGError(kind: .connection, message: "the connection is closed")
                    }
                    return try body(handle, pointer)
                }
            }
        } catch let error as PGError {
            // A Citus coordinator relays a worker it cannot reach as a server error of class 08
            // on a connection that is itself fine: that connection is kept.
            let statusOK = statusIsOK()
            let relayedFromAnotherNode = error.kind == .server && error.sqlState?.errorClass == "08" && statusOK
            if (error.isConnectionFailure && !relayedFromAnotherNode) || !statusOK { markBroken() }
            throw error
        }
    }

    private func statusIsOK() -> Bool {
        handle.withLock { handle in
            guard let pointer = handle.pointer else { return false }
            return PQstatus(pointer) == CONNECTION_OK
        }
    }

    /// One statement as an unnamed one (parse, bind, execute in one message sequence): what a
    /// transaction pooler without prepared-statement support can carry.
    private static func executeUnnamed(_ query: PGQuery, on pointer: OpaquePointer) throws -> PGResult {
        let result = withParameters(query.binds) { types, values, lengths, formats in
            PQexecParams(pointer, query.sql, Int32(query.binds.count), types, values, lengths, formats, 0)
        }
        guard let result else { throw connectionError(pointer) }
        defer { PQclear(result) }
        return try copy(result, pointer)
    }

    private static func executePrepared(_ query: PGQuery, handle: Handle, on pointer: OpaquePointer) throws -> PGResult {
        let types = query.binds.map { Oid($0.type.rawValue) }
        let key = Handle.key(query, types: types)
        var name = handle.prepared[key]
        if name == nil {
            if handle.prepared.count >= preparedLimit {
                if let result = PQexec(pointer, "DEALLOCATE ALL") { PQclear(result) }
                handle.prepared.removeAll()
            }
            let newName = "hs_\(handle.prepared.count)"
            let prepared = types.withUnsafeBufferPointer { typeBuffer in
                PQprepare(pointer, newName, query.sql, Int32(types.count), types.isEmpty ? nil : typeBuffer.baseAddress)
            }
            guard let prepared else { throw connectionError(pointer) }
            defer { PQclear(prepared) }
            _ = try copy(prepared, pointer)
            handle.prepared[key] = newName
            name = newName
        }
        let result = withParameters(query.binds) { _, values, lengths, formats in
            PQexecPrepared(pointer, name!, Int32(query.binds.count), values, lengths, formats, 0)
        }
        guard let result else { throw connectionError(pointer) }
        defer { PQclear(result) }
        return try copy(result, pointer)
    }

    /// libpq reads text-format parameters as C strings, so a NUL byte would silently cut the
    /// value short (`"alice\0x"` would be sent as `"alice"`). PostgreSQL's text cannot hold
    /// NUL anyway: refuse such a parameter with the SQLSTATE the server uses for it, before
    /// anything is sent.
    static func refuseNULInText(_ binds: [PGBind]) throws {
        for (index, bind) in binds.enumerated() where !bind.isBinary {
            if let bytes = bind.bytes, bytes.contains(0) {
                throw PGError(
                    kind: .client, sqlState: .characterNotInRepertoire,
                    message: "parameter $\(index + 1) contains a NUL character, which text cannot hold")
            }
        }
    }

    /// Lays the parameters out in one buffer (each value NUL-terminated, as libpq reads text
    /// parameters as C strings) that lives only for the call.
    private static func withParameters<R>(
        _ binds: [PGBind],
        _ body: (UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R
    ) -> R {
        if binds.isEmpty { return body(nil, nil, nil, nil) }
        var storage: [UInt8] = []
        storage.reserveCapacity(binds.reduce(0) { $0 + ($1.bytes?.count ?? 0) + 1 })
        var offsets: [Int?] = []
        offsets.reserveCapacity(binds.count)
        for bind in binds {
            if let bytes = bind.bytes {
                offsets.append(storage.count)
                storage.append(contentsOf: bytes)
                storage.append(0)
            } else {
                offsets.append(nil)
            }
        }
        // One byte more than the values need, so the buffer has an address even when every
        // parameter is NULL.
        storage.append(0)
        let types = binds.map { Oid($0.type.rawValue) }
        let lengths = binds.map { Int32($0.bytes?.count ?? 0) }
        let formats = binds.map { Int32($0.isBinary ? 1 : 0) }
        return storage.withUnsafeBufferPointer { buffer in
            // Non-empty (the extra byte above), so it has an address.
            guard let address = buffer.baseAddress else { return body(types, nil, lengths, formats) }
            let base = UnsafeRawPointer(address).assumingMemoryBound(to: CChar.self)
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in offset.map { base + $0 } }
            return body(types, values, lengths, formats)
        }
    }

    private static func copy(_ result: OpaquePointer, _ connection: OpaquePointer) throws -> PGResult {
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_SINGLE_TUPLE, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            break
        case PGRES_FATAL_ERROR, PGRES_NONFATAL_ERROR, PGRES_BAD_RESPONSE:
            throw serverError(result, connection)
        default:
            throw PGError.client("unexpected result status \(String(cString: PQresStatus(PQresultStatus(result))))")
        }
        let columnCount = Int(PQnfields(result))
        let rowCount = Int(PQntuples(result))
        var columns: [PGColumn] = []
        columns.reserveCapacity(columnCount)
        for column in 0..<columnCount {
            columns.append(PGColumn(name: String(cString: PQfname(result, Int32(column))), type: PGTypeOID(PQftype(result, Int32(column)))))
        }
        var cells: [[String?]] = []
        cells.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            var values: [String?] = []
            values.reserveCapacity(columnCount)
            for column in 0..<columnCount {
                if PQgetisnull(result, Int32(row), Int32(column)) == 1 {
                    values.append(nil)
                } else {
                    let length = Int(PQgetlength(result, Int32(row), Int32(column)))
                    // Non-NULL for every row and column inside the result's bounds, as here.
                    let value = PQgetvalue(result, Int32(row), Int32(column))!
                    values.append(
                        value.withMemoryRebound(to: UInt8.self, capacity: length) {
                            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
                        })
                }
            }
            cells.append(values)
        }
        let tag = String(cString: PQcmdStatus(result))
        let tuples = String(cString: PQcmdTuples(result))
        return PGResult(columns: columns, cells: cells, affectedRows: Int(tuples), commandTag: tag)
    }

    private static func serverError(_ result: OpaquePointer, _ connection: OpaquePointer) -> PGError {
        let field = { (code: Int32) in resultField(result, code) }
        guard let state = field(CLIBPQ_DIAG_SQLSTATE) else {
            // No SQLSTATE: libpq itself failed (lost connection, protocol error).
            let message = String(cString: PQresultErrorMessage(result)).trimmingTrailingNewlines()
            return PGError(kind: .connection, message: message.isEmpty ? connectionError(connection).message : message)
        }
        return PGError(
            kind: .server,
            sqlState: PGSQLState(state),
            message: field(CLIBPQ_DIAG_MESSAGE_PRIMARY) ?? "unknown server error",
            detail: field(CLIBPQ_DIAG_MESSAGE_DETAIL),
            hint: field(CLIBPQ_DIAG_MESSAGE_HINT),
            position: field(CLIBPQ_DIAG_STATEMENT_POSITION).flatMap { Int($0) },
            table: field(CLIBPQ_DIAG_TABLE_NAME),
            column: field(CLIBPQ_DIAG_COLUMN_NAME),
            constraint: field(CLIBPQ_DIAG_CONSTRAINT_NAME)
        )
    }

    private static func connectionError(_ pointer: OpaquePointer) -> PGError {
        let message = String(cString: PQerrorMessage(pointer)).trimmingTrailingNewlines()
        return PGError(kind: .connection, message: message.isEmpty ? "the connection to the server was lost" : message)
    }
}

/// Opens a libpq connection (blocking): the configuration's string, timeout, application name
/// (with `applicationSuffix`) and UTF-8, its notices to the configuration's sink. The caller
/// owns the handle and keeps the sink alive as long.
func openHandle(_ configuration: PGConnectionConfiguration, applicationSuffix: String = "") throws -> OpaquePointer {
    // Earlier keywords are defaults the connection string may override; later ones win.
    let keywords = ["connect_timeout", "fallback_application_name", "dbname", "client_encoding"]
    let values = [String(configuration.connectTimeoutSeconds), configuration.applicationName + applicationSuffix, configuration.connectionString, "UTF8"]
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

/// Counts round trips to the server (each query, simple query or pipeline is one), so tests
/// and benchmarks can check that a batch costs a constant number of them; and, while asked
/// to, keeps the parameterised statements sent (`query` and `pipeline`), so a test can read
/// their plans.
public final class StatementCounter: Sendable {
    private let value = Atomic<Int>(0)
    private let recorded = Mutex<[PGQuery]?>(nil)
    public init() {}
    public var count: Int { value.load(ordering: .relaxed) }
    func increment() { value.add(1, ordering: .relaxed) }

    public func startRecording() { recorded.withLock { $0 = [] } }

    /// The statements sent since `startRecording`, in order; recording stops.
    public func stopRecording() -> [PGQuery] {
        recorded.withLock { queries in
            defer { queries = nil }
            return queries ?? []
        }
    }

    func note(_ query: PGQuery) { recorded.withLock { $0?.append(query) } }
}
