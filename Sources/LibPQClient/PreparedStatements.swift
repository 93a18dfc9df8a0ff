import CLibPQ

/// The statements prepared on one session, by text and parameter types: the one place that
/// names them and decides when the session's cache starts over. A name is handed out for a
/// statement about to be prepared and kept only once the server confirmed it (`confirm`), so a
/// failed prepare is never executed by name.
struct PreparedStatements {
    /// Prepared statements kept per session before the cache starts over. A session that runs
    /// renamed statements (`PGRelationNames`) keeps each once per set of names: on a Citus
    /// worker, the push's and pull's ~60 statements for each of the node's shard groups.
    static let limit = 2048

    /// The same text with other parameter types is another statement. The query's pieces (the
    /// text between its placeholders) stand for its text: hashed as they are, not joined into
    /// the SQL and a string of types on every execution.
    struct Key: Hashable {
        let pieces: [String]
        let types: [Oid]

        init(_ query: PGQuery, types: [Oid]) {
            pieces = query.pieces
            self.types = types
        }
    }

    private var names: [Key: String] = [:]

    func name(of key: Key) -> String? { names[key] }

    /// Makes room for `count` more statements: when they would not fit, the session's
    /// statements are deallocated (blocking, on the caller's thread) and forgotten.
    mutating func makeRoom(for count: Int, on pointer: OpaquePointer) {
        guard names.count + count > Self.limit else { return }
        if let result = PQexec(pointer, "DEALLOCATE ALL") { PQclear(result) }
        names.removeAll()
    }

    /// A name for a statement not prepared yet; `pending`: names already handed out in the same
    /// pipeline and not confirmed yet.
    func newName(pending: Int = 0) -> String { "hs_\(names.count + pending)" }

    /// The server prepared `key` as `name`: executed by name from now on.
    mutating func confirm(_ key: Key, as name: String) { names[key] = name }
}
