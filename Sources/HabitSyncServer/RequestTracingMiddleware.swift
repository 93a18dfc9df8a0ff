import HTTPTypes
import Hummingbird
import Logging
import Tracing

/// Each request as the server span of a trace, when `serve` runs with tracing on
/// (`ServerTracing`; added only then): it continues the caller's trace where a valid
/// `traceparent` came with the request (the SDK sends one), else begins one. Named by its
/// route (`/v1/sync/push`, never a path with an id in it); it records the method, the route,
/// the status, the request id and, for an error, its code: never the query, a header's value
/// or a body. Inside `RequestObservationMiddleware`, so that it sees the request id and the
/// errors before they become responses. The span ends once the response is written (an event
/// stream's when the stream closes).
struct RequestTracingMiddleware: RouterMiddleware {
    typealias Context = HabitSyncRequestContext
    /// For the status an error is answered with (a 405 where the path has other methods).
    let routes: RouteMethods

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var parent = ServiceContext.current ?? .topLevel
        InstrumentationSystem.instrument.extract(request.headers, into: &parent, using: HeaderExtractor())
        let span = startSpan("HTTP \(request.method.rawValue)", context: parent, ofKind: .server)
        span.attributes["http.request.method"] = request.method.rawValue
        if case Logger.MetadataValue.string(let id)? = context.logger[metadataKey: "request_id"] { span.attributes["habitsync.request_id"] = id }
        do {
            var response = try await ServiceContext.$current.withValue(span.context) { try await next(request, context) }
            Self.finish(span, route: context.endpointPath, status: response.status.code, errorCode: nil)
            let body = response.body
            response.body = ResponseBody(contentLength: body.contentLength) { writer in
                defer { span.end() }
                try await body.write(writer)
            }
            return response
        } catch {
            let apiError = routes.apiError(for: error, of: request)
            Self.finish(span, route: context.endpointPath, status: apiError.status.code, errorCode: apiError.code)
            span.end()
            throw error
        }
    }

    private static func finish(_ span: any Span, route: String?, status: Int, errorCode: String?) {
        if let route {
            span.operationName = route
            span.attributes["http.route"] = route
        }
        span.attributes["http.response.status_code"] = status
        if let errorCode { span.attributes["habitsync.error_code"] = errorCode }
        // A 4xx is the caller's mistake, not the server's (OpenTelemetry's HTTP conventions).
        if status >= 500 { span.setStatus(SpanStatus(code: .error)) }
    }

    /// Reads the trace context's headers (`traceparent`, `tracestate`) for the propagator.
    private struct HeaderExtractor: Extractor {
        func extract(key: String, from headers: HTTPFields) -> String? {
            HTTPField.Name(key).flatMap { headers[$0] }
        }
    }
}
