import CLibPQ
import Foundation
import Synchronization
import Tracing

/// One statement at a time: prepared once per session and run by name, or unnamed (through a
/// pooler without prepared statements), or as simple-protocol text for fixed commands.
extension PGConnection {
    /// Runs one statement with its parameters (extended protocol, text results). Each
    /// distinct statement is prepared once per session and executed by name afterwards: the
    /// push statements are long, and parsing and planning them anew each time was most of
    /// PostgreSQL's work under load.
    @discardableResult
    public func query(_ query: PGQuery) async throws -> PGResult {
        try Self.refuseNULInText(query.binds)
        statementCounter?.note(query)
        let named = namedPreparedStatements
        return try await withSpanWhenTraced("db.query", ofKind: .client) { span in
            DatabaseSpan.describe(span, statements: 1)
            return try await run(query, named: named)
        }
    }

    private func run(_ query: PGQuery, named: Bool) async throws -> PGResult {
        try await blockingCall { handle, pointer in
            let query = handle.relationNames?.apply(to: query) ?? query
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
        // COMMIT and ROLLBACK are the transaction's end; other commands are session setup.
        let name = sql == "COMMIT" ? "db.commit" : sql == "ROLLBACK" ? "db.rollback" : "db.command"
        return try await withSpanWhenTraced(name, ofKind: .client) { span in
            DatabaseSpan.describe(span)
            return try await runSimple(sql, named: named)
        }
    }

    private func runSimple(_ sql: String, named: Bool) async throws -> PGResult {
        try await blockingCall { handle, pointer in
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

    /// One statement as an unnamed one (parse, bind, execute in one message sequence): what a
    /// transaction pooler without prepared-statement support can carry.
    static func executeUnnamed(_ query: PGQuery, on pointer: OpaquePointer) throws -> PGResult {
        let result = withParameters(query.binds) { types, values, lengths, formats in
            PQexecParams(pointer, query.sql, Int32(query.binds.count), types, values, lengths, formats, 0)
        }
        guard let result else { throw connectionError(pointer) }
        defer { PQclear(result) }
        return try copy(result, pointer)
    }

    static func executePrepared(_ query: PGQuery, handle: Handle, on pointer: OpaquePointer) throws -> PGResult {
        let types = query.binds.map { Oid($0.type.rawValue) }
        let key = PreparedStatements.Key(query, types: types)
        let name: String
        if let known = handle.prepared.name(of: key) {
            name = known
        } else {
            handle.prepared.makeRoom(for: 1, on: pointer)
            name = handle.prepared.newName()
            let prepared = types.withUnsafeBufferPointer { typeBuffer in
                PQprepare(pointer, name, query.sql, Int32(types.count), types.isEmpty ? nil : typeBuffer.baseAddress)
            }
            guard let prepared else { throw connectionError(pointer) }
            defer { PQclear(prepared) }
            _ = try copy(prepared, pointer)
            handle.prepared.confirm(key, as: name)
        }
        let result = withParameters(query.binds) { _, values, lengths, formats in
            PQexecPrepared(pointer, name, Int32(query.binds.count), values, lengths, formats, 0)
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
    static func withParameters<R>(
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
}
