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

    func addRoutes(to group: RouterGroup<HabitSyncRequestContext>) {
        group.post("sync/push") { request, context in try await handlePush(request, context) }
        group.get("sync/pull") { request, context in try await handlePull(request, context) }
    }

    // MARK: - Push

    static func deviceID(_ request: Request) throws -> String {
        guard let value = request.headers[.deviceID] else {
            throw APIError(status: .badRequest, code: "missing_device_id", message: "the X-Device-Id header (1–100 characters) is required on push", field: "X-Device-Id")
        }
        guard (1...100).contains(value.unicodeScalars.count), !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw APIError(status: .badRequest, code: "invalid_device_id", message: "X-Device-Id must be 1–100 printable characters", field: "X-Device-Id")
        }
        return value
    }

    func handlePush(_ request: Request, _ context: HabitSyncRequestContext) async throws -> Response {
        guard let identity = context.identity else { throw APIError.unauthorized }
        let device = try Self.deviceID(request)
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        guard contentType.hasPrefix("application/json") else {
            throw APIError(status: .unsupportedMediaType, code: "unsupported_media_type", message: "push bodies are JSON: send Content-Type: application/json")
        }
        let body = try await readBody(request)
        let parsed: PushRequest
        do {
            parsed = try PushRequest.parse(Data(body), maximumChanges: limits.maximumChanges)
        } catch {
            throw APIError(status: HTTPResponse.Status(code: error.status), code: error.code == "too_many_changes" ? "too_large" : error.code, message: error.message, field: error.field)
        }
        let hash = Array(SHA256.hash(data: body))
        let outcome: PushStore.Outcome
        let tally: PushStore.Tally
        do {
            (outcome, tally) = try await push.push(identity: identity, deviceID: device, request: parsed, requestHash: hash, now: Date())
        } catch let error as PGError {
            // The batch's transaction rolled back whole: nothing of it is stored, and the
            // device retries the same batch (spec: 503). The cause is logged, not returned.
            context.logger.error("push transaction failed", metadata: ["error": .string("\(error)")])
            throw APIError(status: .serviceUnavailable, code: "unavailable", message: "the batch could not be stored and nothing of it was applied; retry it", retryAfterSeconds: 1)
        }
        switch outcome {
        case .batchConflict:
            metrics.recordBatch(outcome: "conflict")
            throw APIError(status: .conflict, code: "batch_conflict", message: "batchId \(parsed.batchId.uuidString.lowercased()) was already used for a different batch; use a new batchId", field: "batchId")
        case .response(let status, let bytes, let replayed):
            metrics.recordBatch(outcome: replayed ? "replayed" : "applied")
            metrics.recordPushed(tally)
            return Response(status: HTTPResponse.Status(code: status), headers: [.contentType: "application/json; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }

    /// The body, gunzipped when `Content-Encoding: gzip`, never larger than the limit.
    private func readBody(_ request: Request) async throws -> [UInt8] {
        let tooLarge = APIError(status: .contentTooLarge, code: "too_large", message: "the request body is larger than \(limits.maximumBodyBytes) bytes; send fewer changes per batch")
        var buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limits.maximumBodyBytes)
        } catch {
            throw tooLarge
        }
        switch request.headers[.contentEncoding]?.lowercased() {
        case nil, "identity":
            break
        case "gzip":
            do {
                buffer = try buffer.decompress(with: .gzip(), maxSize: limits.maximumBodyBytes)
            } catch let error as CompressNIOError where error == .bufferOverflow {
                throw tooLarge
            } catch {
                throw APIError(status: .badRequest, code: "invalid_encoding", message: "the body is not valid gzip")
            }
        default:
            throw APIError(status: .unsupportedMediaType, code: "unsupported_encoding", message: "Content-Encoding may be gzip or identity")
        }
        return Array(buffer.readableBytesView)
    }

    // MARK: - Pull

    static let pullParameters: Set<String> = ["cursor", "limit", "collections"]

    func handlePull(_ request: Request, _ context: HabitSyncRequestContext) async throws -> Response {
        guard let identity = context.identity else { throw APIError.unauthorized }
        let query = request.uri.queryParameters
        for (name, _) in query where !Self.pullParameters.contains(String(name)) {
            throw APIError(status: .badRequest, code: "invalid_parameter", message: "unknown query parameter '\(name)' (cursor, limit, collections)", field: String(name))
        }
        var limit = 500
        if let text = query["limit"] {
            guard let value = Int(text), (1...5000).contains(value) else {
                throw APIError(status: .badRequest, code: "invalid_parameter", message: "limit must be a whole number from 1 to 5000, not '\(text)'", field: "limit")
            }
            limit = value
        }
        var cursor: PullCursor?
        if let text = query["cursor"], !text.isEmpty {
            guard let parsed = PullCursor(String(text)) else {
                throw APIError(status: .badRequest, code: "invalid_parameter", message: "cursor is not one this server issued; pull without a cursor to start over", field: "cursor")
            }
            cursor = parsed
        }
        var collections = PullStore.pullableCollections
        if let text = query["collections"] {
            var chosen: [SyncCollection] = []
            for name in text.split(separator: ",", omittingEmptySubsequences: false) {
                guard let collection = SyncCollection(rawValue: String(name)) else {
                    throw APIError(status: .badRequest, code: "invalid_parameter", message: "collections: there is no collection '\(name)'", field: "collections")
                }
                if !chosen.contains(collection) { chosen.append(collection) }
            }
            collections = chosen
        }
        let page: PullStore.Page
        do {
            page = try await pull.pull(identity: identity, after: cursor, limit: limit, collections: collections)
        } catch PullStore.Failure.cursorExpired {
            throw APIError(status: .gone, code: "cursor_expired", message: "the cursor is older than the tombstone retention; pull again without a cursor", field: "cursor")
        }
        metrics.recordPulled(page.changes.count)
        var json = "{\"changes\":["
        json.reserveCapacity(page.changes.reduce(64) { $0 + $1.utf8.count + 1 })
        json += page.changes.joined(separator: ",")
        json += "],\"cursor\":\"\(page.cursor.text)\",\"hasMore\":\(page.hasMore),\"serverTime\":\"\(WireTime.format(Date()))\"}"
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: json)))
    }
}

extension HTTPField.Name {
    static let deviceID = HTTPField.Name("X-Device-Id")!
}
