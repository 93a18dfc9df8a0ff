import Tracing

/// A trace's position as W3C Trace Context's `traceparent` text, which is how a traced push
/// hands its trace to every replica's listener in its change notice (`ChangeNotice`): the
/// listener's span for the notice continues the push's trace.
public enum TraceParent {
    /// The `traceparent` of the span now running; nil when nothing is traced (tracing off, or
    /// a propagator that writes no `traceparent`).
    public static func current() -> String? {
        guard let context = ServiceContext.current else { return nil }
        var carrier = Carrier()
        InstrumentationSystem.instrument.inject(context, into: &carrier.fields, using: carrier)
        return carrier.fields["traceparent"]
    }

    /// A context that continues `traceParent`'s trace; the top level when the propagator does
    /// not accept it (it checks the text: a malformed one starts nothing).
    public static func context(continuing traceParent: String) -> ServiceContext {
        var context = ServiceContext.topLevel
        InstrumentationSystem.instrument.extract(["traceparent": traceParent], into: &context, using: Carrier())
        return context
    }

    private struct Carrier: Injector, Extractor {
        var fields: [String: String] = [:]
        func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
        func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
    }
}
