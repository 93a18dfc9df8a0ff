/// The JWT algorithms a tenant key can have. `none` and every other algorithm are refused.
public enum TokenAlgorithm: String, Sendable, CaseIterable, Codable {
    case hs256 = "HS256"
    case es256 = "ES256"
    case rs256 = "RS256"
}
