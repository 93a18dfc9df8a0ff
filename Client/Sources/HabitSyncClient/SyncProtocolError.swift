/// The server answered something the protocol does not allow.
public enum SyncProtocolError: Error, Sendable, Equatable {
    case malformedResponse
    /// An account export without its trailer (`"complete": true` and counts that match its
    /// sections): cut short, for example by the account's erasure while it was read.
    case incompleteExport
}
