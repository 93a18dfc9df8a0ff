import Foundation
import HTTPTypes
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncStore
import Hummingbird
import Logging
import NIOCore

/// `GET /v1/account/export` (everything the server holds for the caller, streamed) and
/// `DELETE /v1/account` (erases it, answers rows per table).
struct AccountController: Sendable {
    let accounts: AccountStore
    let metrics: ServerMetrics
    let limiter: ExpensiveReadLimiter

    func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.get("account/export") { request, context in try await handleExport(request, context) }
        group.delete("account") { request, context in try await handleErase(request, context) }
    }

    func handleExport(_ request: Request, _ context: AuthenticatedRequestContext) async throws -> Response {
        let identity = context.identity
        try Self.refuseParameters(request)
        // Refused before the 200 is sent; afterwards a failure can only cut the download short
        // (the JSON is then incomplete, which a reader notices).
        try await accounts.checkExportable(tenant: identity.tenantID, user: identity.userID)
        // Held until the document is written (or the response is dropped unwritten).
        let slot = try limiter.admit(identity, kind: "export")
        let accounts = accounts, logger = context.logger
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.contentDisposition] = "attachment; filename=\"habitsync-export.json\""
        headers[.cacheControl] = "no-store"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                defer { slot.release() }
                do {
                    try await accounts.export(tenant: identity.tenantID, user: identity.userID) { piece in
                        try await writer.write(ByteBuffer(string: piece))
                    }
                } catch {
                    logger.error("account export cut short", metadata: ["error": .string(APIError.from(error).code)])
                    throw error
                }
                try await writer.finish(nil)
            })
    }

    func handleErase(_ request: Request, _ context: AuthenticatedRequestContext) async throws -> Response {
        let identity = context.identity
        try Self.refuseParameters(request)
        let report = try await accounts.eraseUser(tenant: identity.tenantID, user: identity.userID)
        metrics.recordAccountErased()
        context.logger.notice("account erased", metadata: ["rows": .stringConvertible(report.total)])
        let rows = report.rows.keys.sorted().map { "\(JSONText.string($0)):\(report.rows[$0] ?? 0)" }.joined(separator: ",")
        let json = "{\"erased\":true,\"rows\":{\(rows)},\"total\":\(report.total)}"
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: json)))
    }

    private static func refuseParameters(_ request: Request) throws {
        for (name, _) in request.uri.queryParameters {
            throw APIError.unknownParameter(name, accepted: "none are taken")
        }
    }
}
