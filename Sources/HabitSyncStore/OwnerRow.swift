import Foundation
import LibPQClient

/// The user's own `users` row as a relation, `owner(tenant_id, user_id)`, for the
/// `INSERT … SELECT` statements that write a user's rows: they take `tenant_id` and `user_id`
/// from it rather than from binds.
///
/// Same rows, one primary-key probe more (the push created and locked the row first). The
/// reason is Citus (deploy/README.md): it sends an `INSERT … SELECT` whole to the user's
/// shard only when the distribution column comes from a co-located table filtered to one
/// user; with the user id as a bind it gathers the rows on the coordinator and writes them
/// with `COPY`, which row-level security refuses.
enum OwnerRow {
    static func relation(tenant: UUID, user: String) -> PGQuery {
        "(SELECT tenant_id, user_id FROM users WHERE tenant_id = \(tenant) AND user_id = \(user)) AS owner"
    }
}
