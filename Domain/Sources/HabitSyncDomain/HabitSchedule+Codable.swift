import Foundation

/// A schedule in a device's models is the wire's tagged object, read with the server's rules.
extension HabitSchedule: Codable {
    private enum Key: String, CodingKey { case type, n, weekdays }

    public init(from decoder: any Decoder) throws {
        let fields = try [String: JSONValue](from: decoder)
        do {
            self = try HabitSchedule.read(fields, context: .standalone())
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(type, forKey: .type)
        try container.encodeIfPresent(n, forKey: .n)
        try container.encodeIfPresent(weekdays?.map(\.rawValue), forKey: .weekdays)
    }
}
