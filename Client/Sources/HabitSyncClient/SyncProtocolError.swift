/// The server answered something the protocol does not allow.
public enum SyncProtocolError: Error, Sendable, Equatable {
    case malformedResponse
}
