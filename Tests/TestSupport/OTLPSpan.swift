import Foundation

/// One span of an OTLP `ExportTraceServiceRequest`, as the tests check it: its ids in
/// hexadecimal, name, kind, attributes (each value as text), status and the service that
/// sent it. Decoded from the protobuf wire format by hand (the few fields the tests read;
/// opentelemetry-proto's `trace.proto`, `common.proto`, `resource.proto`).
public struct OTLPSpan: Sendable {
    public var traceID = ""
    public var spanID = ""
    /// Empty for a root span.
    public var parentSpanID = ""
    public var name = ""
    /// `SpanKind`: 1 internal, 2 server, 3 client, 4 producer, 5 consumer.
    public var kind = 0
    public var attributes: [String: String] = [:]
    /// `Status.code`: 0 unset, 1 ok, 2 error.
    public var statusCode = 0
    /// The resource's `service.name`.
    public var serviceName = ""

    public enum DecodingError: Error {
        case truncated
        case unsupportedWireType(Int)
    }

    /// The spans of every resource and scope of one export.
    public static func decode(exportRequest bytes: [UInt8]) throws -> [OTLPSpan] {
        var spans: [OTLPSpan] = []
        var request = ProtobufReader(bytes[...])
        while let (field, wire) = try request.nextField() {
            guard field == 1, wire == 2 else {
                try request.skip(wire)
                continue
            }
            // ResourceSpans: 1 resource, 2 scope_spans.
            var resourceSpans = ProtobufReader(try request.lengthDelimited())
            var serviceName = ""
            var scopes: [ArraySlice<UInt8>] = []
            while let (field, wire) = try resourceSpans.nextField() {
                switch (field, wire) {
                case (1, 2):
                    var resource = ProtobufReader(try resourceSpans.lengthDelimited())
                    while let (field, wire) = try resource.nextField() {
                        if field == 1, wire == 2 {
                            let (key, value) = try keyValue(try resource.lengthDelimited())
                            if key == "service.name" { serviceName = value }
                        } else {
                            try resource.skip(wire)
                        }
                    }
                case (2, 2): scopes.append(try resourceSpans.lengthDelimited())
                default: try resourceSpans.skip(wire)
                }
            }
            for scope in scopes {
                // ScopeSpans: 2 spans.
                var scopeSpans = ProtobufReader(scope)
                while let (field, wire) = try scopeSpans.nextField() {
                    guard field == 2, wire == 2 else {
                        try scopeSpans.skip(wire)
                        continue
                    }
                    var span = try OTLPSpan(try scopeSpans.lengthDelimited())
                    span.serviceName = serviceName
                    spans.append(span)
                }
            }
        }
        return spans
    }

    init(_ bytes: ArraySlice<UInt8>) throws {
        var reader = ProtobufReader(bytes)
        while let (field, wire) = try reader.nextField() {
            switch (field, wire) {
            case (1, 2): traceID = Self.hex(try reader.lengthDelimited())
            case (2, 2): spanID = Self.hex(try reader.lengthDelimited())
            case (4, 2): parentSpanID = Self.hex(try reader.lengthDelimited())
            case (5, 2): name = String(decoding: try reader.lengthDelimited(), as: UTF8.self)
            case (6, 0): kind = Int(truncatingIfNeeded: try reader.varint())
            case (9, 2):
                let (key, value) = try Self.keyValue(try reader.lengthDelimited())
                attributes[key] = value
            case (15, 2):
                // Status: 3 code.
                var status = ProtobufReader(try reader.lengthDelimited())
                while let (field, wire) = try status.nextField() {
                    if field == 3, wire == 0 { statusCode = Int(truncatingIfNeeded: try status.varint()) } else { try status.skip(wire) }
                }
            default: try reader.skip(wire)
            }
        }
    }

    /// A `KeyValue`: its key, and its `AnyValue` as text (string, bool, int or double).
    static func keyValue(_ bytes: ArraySlice<UInt8>) throws -> (String, String) {
        var reader = ProtobufReader(bytes)
        var key = "", value = ""
        while let (field, wire) = try reader.nextField() {
            switch (field, wire) {
            case (1, 2): key = String(decoding: try reader.lengthDelimited(), as: UTF8.self)
            case (2, 2):
                var any = ProtobufReader(try reader.lengthDelimited())
                while let (field, wire) = try any.nextField() {
                    switch (field, wire) {
                    case (1, 2): value = String(decoding: try any.lengthDelimited(), as: UTF8.self)
                    case (2, 0): value = try any.varint() != 0 ? "true" : "false"
                    case (3, 0): value = String(Int64(bitPattern: try any.varint()))
                    case (4, 1): value = String(Double(bitPattern: try any.fixed64()))
                    default: try any.skip(wire)
                    }
                }
            default: try reader.skip(wire)
            }
        }
        return (key, value)
    }

    static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}

/// Protobuf's wire format, read field by field: varints, fixed 64 and 32 bits, and
/// length-delimited bytes (messages, strings, bytes).
struct ProtobufReader {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    /// The next field's number and wire type; nil at the end.
    mutating func nextField() throws -> (Int, Int)? {
        guard !bytes.isEmpty else { return nil }
        let tag = try varint()
        return (Int(tag >> 3), Int(tag & 7))
    }

    mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while let byte = bytes.popFirst() {
            guard shift < 64 else { throw OTLPSpan.DecodingError.truncated }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        throw OTLPSpan.DecodingError.truncated
    }

    mutating func fixed64() throws -> UInt64 {
        try take(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func lengthDelimited() throws -> ArraySlice<UInt8> {
        try take(Int(truncatingIfNeeded: try varint()))
    }

    mutating func skip(_ wireType: Int) throws {
        switch wireType {
        case 0: _ = try varint()
        case 1: _ = try take(8)
        case 2: _ = try lengthDelimited()
        case 5: _ = try take(4)
        default: throw OTLPSpan.DecodingError.unsupportedWireType(wireType)
        }
    }

    private mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count else { throw OTLPSpan.DecodingError.truncated }
        defer { bytes = bytes.dropFirst(count) }
        return bytes.prefix(count)
    }
}
