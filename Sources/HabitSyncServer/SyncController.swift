import CompressNIO
import Crypto
import Foundation
import HTTPTypes
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncStore
import Hummingbird
import LibPQClient
import Logging
import NIOCore

/// `POST /v1/sync/push` and `GET /v1/sync/pull`: decode, check, call the store, encode.
struct SyncController: Sendable {
    let push: PushStore
    let pull: PullStore
    let limits: SyncLimits
    let metrics: ServerMetrics
    let bodyBudget: RequestBodyBudget
    let quotas: TenantQuotas
    let meter: TenantMeter

    func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.post("sync/push") { request, context in try await handlePush(request, context) }
        group.get("sync/pull") { request, context in try await handlePull(request, context) }
    }

    // MARK: - Push

    static func deviceID(_ request: Request) throws -> String {
        guard let value = request.headers[.deviceID] else {
            throw APIError(.missingDeviceID, "the X-Device-Id header (1–100 characters) is required on push", field: "X-Device-Id")
        }
        guard DeviceID.isWellFormed(value) else {
            throw APIError(.invalidDeviceID, "X-Device-Id must be 1–100 printable characters", field: "X-Device-Id")
        }
        // `server` authors the server's own writes (cascades, abandoned sessions, awards) and
        // breaks LWW ties: no device may pose as it.
        guard !ServerDevice.isReserved(value) else {
            throw APIError(.invalidDeviceID, "X-Device-Id '\(ServerDevice.name)' is reserved for the server's own writes", field: "X-Device-Id")
        }
        return value
    }

    func handlePush(_ request: Request, _ context: AuthenticatedRequestContext) async throws -> Response {
        let identity = context.identity
        let device = try Self.deviceID(request)
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        guard contentType.hasPrefix("application/json") else {
            throw APIError(.unsupportedMediaType, "push bodies are JSON: send Content-Type: application/json")
        }
        // The memory this push may hold is reserved as its body arrives and, once it is whole,
        // for everything decoding it builds; a stalled upload holds only what it sent.
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limits.maximumBodyBytes { throw tooLarge }
        // The tenant's pushes a second before the body is read: a flood is refused cheaply.
        let ticket = try await refusedByTenant(identity.tenantID) { try await quotas.arrivingPush(tenant: identity.tenantID) }
        let reservation = RequestBodyBudget.Reservation(bodyBudget)
        defer { reservation.releaseAll() }
        let body = try await readBody(request, reservation)
        try reservation.resize(to: RequestBodyBudget.estimate(bodyBytes: body.count))
        let parsed = try PushRequest.parse(bytes: body, maximumChanges: limits.maximumChanges)
        // Before anything is stored: a refused push changes nothing, and the device retries it.
        let deletesOnly = parsed.changes.allSatisfy { $0["op"] == .string(ChangeOperation.delete.rawValue) }
        try await refusedByTenant(identity.tenantID) {
            try await quotas.admit(ticket, changes: parsed.changes.count, deletesOnly: deletesOnly)
        }
        metrics.recordTenantPush(identity.tenantID, changes: parsed.changes.count)
        meter.count(identity.tenantID) { usage in
            usage.pushes += 1
            usage.changesReceived += Int64(parsed.changes.count)
            usage.bytesIn += Int64(body.count)
        }
        meter.seen(identity.tenantID, user: identity.userID, device: device)
        let hash = Array(SHA256.hash(data: body))
        let (outcome, tally) = try await push.push(
            identity: identity, deviceID: device, request: parsed, requestHash: hash, now: Date(), encode: PushAnswerJSON.encode)
        if tally.isolatedRefusals {
            context.logger.warning(
                "push stored with changes the database refused",
                metadata: [
                    "rejected": .stringConvertible(tally.counts.values.reduce(0) { $0 + ($1[.rejected] ?? 0) }),
                    "skipped_steps": .string(tally.skippedSteps.joined(separator: "; ")),
                    "refusals": .string(tally.refusals.joined(separator: "; ")),
                ])
        }
        switch outcome {
        case .batchConflict:
            metrics.recordBatch(outcome: "conflict")
            throw APIError(.batchConflict, "batchId \(parsed.batchId.uuidString.lowercased()) was already used for a different batch; use a new batchId", field: "batchId")
        case .response(let status, let bytes, let replayed):
            metrics.recordBatch(outcome: replayed ? "replayed" : "applied")
            metrics.recordPushed(tally)
            meter.count(identity.tenantID) { usage in
                usage.changesApplied += Int64(tally.counts.values.reduce(0) { $0 + ($1[.applied] ?? 0) })
                usage.bytesOut += Int64(bytes.count)
            }
            return Response(
                status: HTTPResponse.Status(code: status), headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }

    /// Runs a tenant limit's check; a refusal is counted (metering, `/metrics`) and thrown.
    private func refusedByTenant<T>(_ tenant: UUID, _ check: () async throws -> T) async throws -> T {
        do {
            return try await check()
        } catch let error as APIError where error.kind == .tenantLimit {
            meter.count(tenant) { $0.pushesRefused += 1 }
            metrics.recordTenantPush(tenant, changes: 0, refusedBy: error.limit ?? "unknown")
            throw error
        }
    }

    private var tooLarge: APIError {
        APIError(.tooLarge, "the request body is larger than \(limits.maximumBodyBytes) bytes; send fewer changes per batch")
    }

    /// The body, gunzipped when `Content-Encoding: gzip`, never larger than the limit; what has
    /// arrived is reserved in the budget as it arrives (a gzip body also its largest inflation).
    private func readBody(_ request: Request, _ reservation: RequestBodyBudget.Reservation) async throws -> [UInt8] {
        let gzip: Bool
        switch request.headers[.contentEncoding]?.lowercased() {
        case nil, "identity": gzip = false
        case "gzip": gzip = true
        default: throw APIError(.unsupportedEncoding, "Content-Encoding may be gzip or identity")
        }
        var buffer = ByteBuffer()
        do {
            for try await chunk in request.body {
                guard buffer.readableBytes + chunk.readableBytes <= limits.maximumBodyBytes else { throw tooLarge }
                buffer.writeImmutableBuffer(chunk)
                try reservation.resize(to: gzip ? 2 * buffer.readableBytes : RequestBodyBudget.estimate(bodyBytes: buffer.readableBytes))
            }
        } catch let error as APIError {
            throw error
        } catch let error as RequestBodyBudget.Refusal {
            throw error
        } catch let error as SlowClientGuard.UploadTooSlow {
            throw error
        } catch {
            throw APIError(.malformedRequest, "the request body ended before it was complete")
        }
        guard gzip else { return Array(buffer.readableBytesView) }
        // Room to inflate into (at most the body limit), but never more than the whole budget:
        // what it really needs is reserved once it is inflated.
        try reservation.resize(to: min(2 * buffer.readableBytes + limits.maximumBodyBytes, bodyBudget.capacityBytes))
        do {
            buffer = try buffer.decompress(with: .gzip(), maxSize: limits.maximumBodyBytes)
        } catch let error as CompressNIOError where error == .bufferOverflow {
            throw tooLarge
        } catch {
            throw APIError(.invalidEncoding, "the body is not valid gzip")
        }
        return Array(buffer.readableBytesView)
    }

    // MARK: - Pull

    static let pullParameters: Set<String> = ["cursor", "limit", "collections", "historyFrom"]

    func handlePull(_ request: Request, _ context: AuthenticatedRequestContext) async throws -> Response {
        let identity = context.identity
        let query = request.uri.queryParameters
        for (name, _) in query where !Self.pullParameters.contains(String(name)) {
            throw APIError.unknownParameter(name, accepted: "cursor, limit, collections, historyFrom")
        }
        var limit = 500
        if let text = query["limit"] {
            guard let value = Int(text), (1...5000).contains(value) else {
                throw APIError(.invalidParameter, "limit must be a whole number from 1 to 5000, not '\(TextRules.quoted(String(text)))'", field: "limit")
            }
            limit = value
        }
        var cursor: PullCursor?
        if let text = query["cursor"], !text.isEmpty {
            guard let parsed = PullCursor(String(text)) else {
                throw APIError(.invalidParameter, "cursor is not one this server issued; pull without a cursor to start over", field: "cursor")
            }
            cursor = parsed
        }
        var collections = PullStore.pullableCollections
        if let text = query["collections"] {
            var chosen: [SyncCollection] = []
            for name in text.split(separator: ",", omittingEmptySubsequences: false) {
                guard let collection = SyncCollection(rawValue: String(name)) else {
                    throw APIError(.invalidParameter, "collections: there is no collection '\(TextRules.quoted(String(name)))'", field: "collections")
                }
                if !chosen.contains(collection) { chosen.append(collection) }
            }
            collections = chosen
        }
        var window: LocalDate?
        if let text = query["historyFrom"] {
            guard let date = LocalDate(String(text), years: LocalDate.recordYears) else {
                throw APIError(
                    .invalidParameter, "historyFrom must be a date yyyy-MM-dd of years 1970–9999, not '\(TextRules.quoted(String(text)))'",
                    field: "historyFrom")
            }
            window = date
        }
        let page = try await pull.pull(identity: identity, after: cursor, limit: limit, collections: collections, window: window)
        metrics.recordPulled(page.changes.count)
        // The records are JSON PostgreSQL rendered (`WireChangeSQL`: the one exception to
        // writing JSON in Swift; re-encoding them here was not measured), placed as they are.
        var writer = JSONObjectWriter(reservingCapacity: page.changes.reduce(256) { $0 + $1.utf8.count + 1 })
        writer.add("changes", jsonArray: page.changes)
        writer.add("cursor", page.cursor.text)
        writer.add("hasMore", page.hasMore)
        var progress = JSONObjectWriter()
        progress.add("phase", page.progress.phase.rawValue)
        progress.add("remaining", page.progress.remaining)
        progress.add("later", page.progress.later)
        writer.add("progress", json: progress.json)
        if let window = page.window { writer.add("historyFrom", window.description) }
        if let epoch = page.epoch { writer.add("epoch", epoch.text) }
        if let digests = page.digests {
            var byCollection = JSONObjectWriter()
            for (collection, digest) in digests.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                var fields = JSONObjectWriter()
                fields.add("count", digest.count)
                fields.add("hash", digest.hashText)
                byCollection.add(collection.rawValue, json: fields.json)
            }
            writer.add("digests", json: byCollection.json)
        }
        writer.add("serverTime", WireTime.format(Date()))
        let json = writer.json
        metrics.recordTenantPull(identity.tenantID)
        meter.count(identity.tenantID) { usage in
            usage.pulls += 1
            usage.bytesOut += Int64(json.utf8.count)
        }
        // A pull may leave out its device (X-Device-Id is optional there): the user alone.
        meter.seen(identity.tenantID, user: identity.userID, device: try? Self.deviceID(request))
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: json)))
    }
}

extension HTTPField.Name {
    // A constant, valid header name: this cannot fail.
    static let deviceID = HTTPField.Name("X-Device-Id")!
}
