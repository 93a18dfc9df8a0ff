/// Why key material was refused: a tenant's secret or PEM key, an issuer's key document, a
/// key to sign with.
public struct KeyMaterialError: Error, Sendable, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
