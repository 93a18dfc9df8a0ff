import CLibPQ
import Foundation
import Synchronization
import Tracing

/// Several statements in one round trip (libpq's pipeline mode), and what waits to go with the
/// next one: a transaction's `BEGIN` and settings, statements whose results nobody reads.
extension PGConnection {
    /// Queues fixed commands (never input) to be sent in the same round trip as the next
    /// statement: a transaction's `BEGIN` and `SET LOCAL`s cost no round trip of their own.
    /// `PGPool.withTransaction` uses it; `commands` adds to the queue while it is not empty.
    public func deferCommands(unsafeSQL commands: [String]) {
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

    /// Forgets everything queued that was never sent, and the lease's relation names (a lease
    /// ends).
    func discardPending() {
        handle.withLock { handle in
            _ = handle.takePending()
            handle.relationNames = nil
        }
    }

    /// Statements of this lease name relations as `names` says (`PGRelationNames`).
    func useRelationNames(_ names: PGRelationNames?) {
        handle.withLock { $0.relationNames = names }
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
    public func commands(unsafeSQL commands: [String]) async throws {
        if commands.isEmpty { return }
        let queries = commands.map { PGQuery(unsafeSQL: $0) }
        // Behind a deferred BEGIN, these wait for the next statement too.
        let deferred = handle.withLock { handle -> Bool in
            guard !handle.prelude.isEmpty else { return false }
            handle.prelude += queries
            return true
        }
        if deferred { return }
        try await blockingCall { handle, pointer in
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
        // A pipeline that ends the transaction is its commit: its statements, then COMMIT.
        return try await withSpanWhenTraced(commit ? "db.commit" : "db.pipeline", ofKind: .client) { span in
            DatabaseSpan.describe(span, statements: queries.count)
            return try await blockingCall { handle, pointer in
                let (prelude, deferred) = handle.takePending()
                let results = try Self.runPipeline(prelude: prelude, deferred: deferred, queries, named: named, commit: commit, handle: handle, on: pointer)
                handle.deliveredResult = true
                if commit { handle.committed = true }
                return results
            }
        }
    }

    /// What one pipeline sent, in order: each produces one result (or an aborted marker).
    enum PipelineStep {
        case prepare(key: PreparedStatements.Key, name: String)
        /// A statement; `returned`: its result is the caller's (not a deferred statement's).
        case execute(returned: Bool)
        /// A fixed command (the prelude, the closing COMMIT): its result is not returned.
        case command
    }

    /// Sends `prelude` (fixed commands, unnamed), the `deferred` statements, `queries`, and a
    /// `COMMIT` if asked, in one round trip; returns the results of `queries`.
    static func runPipeline(
        prelude: [PGQuery] = [], deferred: [PGQuery] = [], _ queries: [PGQuery], named: Bool, commit: Bool = false, handle: Handle,
        on pointer: OpaquePointer
    ) throws -> [PGResult] {
        if prelude.isEmpty && deferred.isEmpty && queries.isEmpty && !commit { return [] }
        if named { handle.prepared.makeRoom(for: deferred.count + queries.count, on: pointer) }
        guard PQenterPipelineMode(pointer) == 1 else { throw connectionError(pointer) }
        defer { PQexitPipelineMode(pointer) }
        var steps: [PipelineStep] = []
        for command in prelude {
            guard PQsendQueryParams(pointer, command.sql, 0, nil, nil, nil, nil, 0) == 1 else { throw connectionError(pointer) }
            steps.append(.command)
        }
        var pending: [PreparedStatements.Key: String] = [:]
        let statements = handle.relationNames.map { names in (deferred + queries).map(names.apply) } ?? deferred + queries
        for (position, query) in statements.enumerated() {
            let types = query.binds.map { Oid($0.type.rawValue) }
            var name: String?
            if named {
                let key = PreparedStatements.Key(query, types: types)
                name = handle.prepared.name(of: key) ?? pending[key]
                if name == nil {
                    let newName = handle.prepared.newName(pending: pending.count)
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
                if current != nil { handle.prepared.confirm(key, as: name) }
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
}
