/// Whose privileges a transaction of a `PGPool` runs with.
public enum TransactionRole: Sendable {
    /// The configuration's `role` (the request role), when it names one.
    case configured
    /// The role the connection logged in as (`SET LOCAL ROLE NONE`). For the few transactions
    /// whose whole work is a `SECURITY DEFINER` function: on one server the function runs as
    /// its owner whatever the caller, but Citus runs the function's statements on the workers
    /// under the transaction's role, which for the request role would be refused.
    case login
}
