import Tracing

/// Runs `operation` inside a span named `name` only when the caller is being traced: a request
/// the server's tracing middleware began, or a span inside one, set `ServiceContext.current`.
/// Without that (tracing off; background work such as migrations, the meter's flush, the
/// change listener) no span is made, and it costs one task-local read. Every layer's spans go
/// through this, so tracing off is as cheap as no tracing at all.
///
/// A span that fails records the error's type (`error.type`) and, for a database error, its
/// SQLSTATE: never the error's text, which may quote what a user sent.
public func withSpanWhenTraced<T>(
    _ name: String, ofKind kind: SpanKind = .internal, isolation: isolated (any Actor)? = #isolation,
    _ operation: ((any Span)?) async throws -> T
) async throws -> T {
    guard let context = ServiceContext.current else { return try await operation(nil) }
    let span = startSpan(name, context: context, ofKind: kind)
    defer { span.end() }
    do {
        return try await ServiceContext.$current.withValue(span.context, operation: { try await operation(span) }, isolation: isolation)
    } catch {
        span.attributes["error.type"] = String(reflecting: type(of: error))
        if let state = (error as? PGError)?.sqlState { span.attributes["db.response.status_code"] = state.code }
        span.setStatus(SpanStatus(code: .error))
        throw error
    }
}

/// The attributes every statement's span carries (OpenTelemetry's database conventions). No
/// statement text and no parameter: a span never carries what a user wrote.
enum DatabaseSpan {
    static func describe(_ span: (any Span)?, statements: Int? = nil) {
        guard let span else { return }
        span.attributes["db.system.name"] = "postgresql"
        if let statements { span.attributes["db.operation.batch.size"] = statements }
    }
}
