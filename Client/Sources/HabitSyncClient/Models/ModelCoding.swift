import Foundation
import HabitSyncDomain

/// Models to and from the wire's JSON: timestamps as RFC 3339 with milliseconds (the server
/// keeps milliseconds), everything else as Codable says.
enum ModelCoding {
    static func fields<Model: SyncModel>(_ model: Model) throws -> [String: JSONValue] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(WireTime.format(date))
        }
        guard case .object(let fields) = try JSONParser.parse(encoder.encode(model)) else { throw LocalStoreError.corruptRow }
        return fields
    }

    static func model<Model: SyncModel>(_ type: Model.Type, json: String) throws -> Model {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = WireTime.parse(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 timestamp")
            }
            return date
        }
        return try decoder.decode(type, from: Data(json.utf8))
    }
}
