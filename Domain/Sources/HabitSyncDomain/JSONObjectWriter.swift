/// The one JSON writer of the server's responses (issue 48): an object's fields in the order
/// written, names and strings escaped by `JSONText.string`, numbers as integers, and text that
/// is JSON already (a record PostgreSQL rendered, another writer's object) inserted as it is.
/// `JSONValue.jsonText` writes its objects through it too.
public struct JSONObjectWriter: Sendable {
    private var text = "{"
    private var isEmpty = true

    public init(reservingCapacity capacity: Int = 0) {
        if capacity > 0 { text.reserveCapacity(capacity) }
    }

    /// The object, closed.
    public var json: String { text + "}" }

    /// A field whose value is JSON text already (an object, an array, a number or a literal).
    public mutating func add(_ name: String, json value: String) {
        startField(name)
        text += value
    }

    private mutating func startField(_ name: String) {
        if !isEmpty { text += "," }
        isEmpty = false
        text += JSONText.string(name)
        text += ":"
    }

    public mutating func add(_ name: String, _ value: String) { add(name, json: JSONText.string(value)) }
    public mutating func add(_ name: String, _ value: Int64) { add(name, json: String(value)) }
    public mutating func add(_ name: String, _ value: Int) { add(name, json: String(value)) }
    public mutating func add(_ name: String, _ value: Bool) { add(name, json: value ? "true" : "false") }

    /// An array of values that are JSON text already (a pull page's records: written in place,
    /// not joined into a copy first).
    public mutating func add(_ name: String, jsonArray items: [String]) {
        startField(name)
        text.reserveCapacity(text.utf8.count + items.reduce(2) { $0 + $1.utf8.count + 1 })
        text += "["
        for (index, item) in items.enumerated() {
            if index > 0 { text += "," }
            text += item
        }
        text += "]"
    }
}
