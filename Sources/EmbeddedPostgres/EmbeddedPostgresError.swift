/// Why the embedded PostgreSQL cluster could not be prepared or started.
public struct EmbeddedPostgresError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
