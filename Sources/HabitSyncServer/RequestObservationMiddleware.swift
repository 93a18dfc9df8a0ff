import Foundation
import HTTPTypes
import Hummingbird
import LibPQClient
import Logging

/// The outermost middleware: gives each request an id (the caller's `X-Request-Id` when it is
/// sane, else a new one), turns every error into the JSON error body, writes one access-log
/// line, and records the request metrics.
struct RequestObservationMiddleware: RouterMiddleware {
    typealias Context = HabitSyncRequestContext
    let metrics: ServerMetrics
    let routes: RouteMethods

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let clock = ContinuousClock()
        let started = clock.now
        var context = context
        let requestID = Self.acceptableRequestID(request.headers[.requestID]) ?? UUID().uuidString.lowercased()
        context.logger[metadataKey: "request_id"] = .string(requestID)
        // Hummingbird's own id of the request would be a second id on every line.
        context.logger[metadataKey: "hb.request.id"] = nil

        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            let apiError = routes.apiError(for: error, of: request)
            // A bug (500) or an unexpected database error is logged; a 503 the server chose
            // (database lost, busy, memory budget) is not an error of this request.
            if apiError.kind == .internalError || (error as? PGError)?.kind == .server {
                // PGError's description carries SQLSTATE and the server's message (for a data
                // error the constraint, table and column instead), never parameters or values.
                let detail = (error as? PGError).map { "\($0)" } ?? String(reflecting: type(of: error))
                context.logger.error("request failed", metadata: ["error": .string(detail)])
            }
            response = try apiError.response(from: request, context: context)
        }
        response.headers[.requestID] = requestID
        let route = context.endpointPath ?? "unmatched"
        let duration = clock.now - started
        metrics.recordRequest(method: request.method.rawValue, route: route, status: response.status.code, duration: duration)
        var fields: Logger.Metadata = [
            "method": .string(request.method.rawValue), "route": .string(route), "status": .stringConvertible(response.status.code),
            "duration_ms": .string(Self.tenths(duration / .milliseconds(1))),
        ]
        if let tenant = context.observedTenant.tenant { fields["tenant"] = .string(tenant) }
        context.logger.info("request", metadata: fields)
        return response
    }

    /// `String(format: "%.1f")` without printf, which every request's log line paid for
    /// (issue 46): milliseconds to one decimal, rounded half up.
    static func tenths(_ milliseconds: Double) -> String {
        guard milliseconds.isFinite, milliseconds >= 0, milliseconds < 1e15 else { return "\(milliseconds)" }
        let tenths = Int((milliseconds * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    static func acceptableRequestID(_ value: String?) -> String? {
        guard let value, (1...100).contains(value.count),
            value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") })
        else { return nil }
        return value
    }
}

extension HTTPField.Name {
    // A constant, valid header name: this cannot fail.
    static let requestID = HTTPField.Name("X-Request-Id")!
}
