import Foundation
import HTTPTypes
import HabitSyncAuth
import HabitSyncStore
import Hummingbird
import Testing
import Yams

@testable import HabitSyncDomain
@testable import HabitSyncServer

/// The error table (`APIErrorKind`) is the API's whole list of errors: the OpenAPI document
/// names the same codes, and every error of the layers below lands on a kind of it.
@Suite struct ErrorTableTests {
    @Test func theOpenAPIDocumentListsExactlyTheTablesCodes() throws {
        // The document the binary serves (`GET /openapi.yaml`).
        let bytes = OpenAPIDocument.bytes
        let document = try #require(try Yams.load(yaml: String(decoding: bytes, as: UTF8.self)) as? [String: Any])
        let components = try #require(document["components"] as? [String: Any])
        let schemas = try #require(components["schemas"] as? [String: Any])
        let error = try #require((schemas["Error"] as? [String: Any])?["properties"] as? [String: Any])
        let inner = try #require((error["error"] as? [String: Any])?["properties"] as? [String: Any])
        let documented = try #require((inner["code"] as? [String: Any])?["enum"] as? [String])
        #expect(Set(documented).count == documented.count, "a code is listed twice")
        let table = APIErrorKind.codes
        #expect(Set(documented).subtracting(table).sorted() == [], "in openapi.yaml, not in the table")
        #expect(table.subtracting(documented).sorted() == [], "in the table, not in openapi.yaml")
    }

    @Test func everyKindIsAnErrorStatusAndEveryRetryableOneSaysWhen() {
        for kind in APIErrorKind.allCases {
            #expect((400...599).contains(kind.status.code), "\(kind)")
            #expect(kind.code.allSatisfy { $0.isLowercase || $0 == "_" }, "\(kind): \(kind.code)")
            // 429 and 503 are "come back later": a device needs to know when.
            let retryable = kind.status == .tooManyRequests || kind.status == .serviceUnavailable
            #expect((kind.retryAfterSeconds != nil) == retryable, "\(kind)")
        }
        // A code shared by several kinds means one thing: the same status.
        let statuses = Dictionary(grouping: APIErrorKind.allCases, by: \.code).mapValues { Set($0.map(\.status.code)) }
        #expect(statuses.filter { $0.value.count > 1 }.keys.sorted() == [])
    }

    /// What the layers below throw, and the code, status and hint a device gets for it.
    @Test(
        arguments: [
            (PushRequestError(code: .tooManyChanges, field: nil, message: "m") as any Error, "too_large", 413, nil),
            (PushRequestError(code: .tooLarge, field: nil, message: "m"), "too_large", 413, nil),
            (PushRequestError(code: .malformedJSON, field: nil, message: "m"), "malformed_json", 400, nil),
            (PushRequestError(code: .malformedRequest, field: nil, message: "m"), "malformed_request", 400, nil),
            (PushRequestError(code: .unknownField, field: "x", message: "m"), "unknown_field", 400, nil),
            (PushRequestError(code: .invalidField, field: "x", message: "m"), "invalid_field", 400, nil),
            (PushRequestError(code: .unsupportedProtocolVersion, field: nil, message: "m"), "unsupported_protocol_version", 400, nil),
            (StoreError(.tooManyPushes, "m"), "too_many_requests", 429, 1),
            (StoreError(.tooManyReads, "m"), "too_many_requests", 429, 1),
            (StoreError(.rangeTooLarge, "m"), "range_too_large", 400, nil),
            (StoreError(.accountErased, "m"), "account_erased", 410, nil),
            (StoreError(.tenantNotFound, "m"), "internal", 500, nil),
            (RequestBodyBudget.Refusal.busy, "busy", 503, 1),
            (RequestBodyBudget.Refusal.largerThanBudget, "too_large", 413, nil),
            (PullStore.Failure.cursorExpired, "cursor_expired", 410, nil),
            (PullStore.Failure.cursorForOtherCollections, "invalid_parameter", 400, nil),
            (HTTPError(.notFound), "not_found", 404, nil),
            (HTTPError(.badRequest), "malformed_request", 400, nil),
            (HTTPError(.rangeNotSatisfiable), "bad_request", 400, nil),
            (CancellationError(), "internal", 500, nil),
        ] as [(any Error, String, Int, Int?)])
    func everyLowerLayerErrorLandsOnAKind(error: any Error, code: String, status: Int, retryAfter: Int?) {
        let answer = APIError.from(error)
        #expect(answer.code == code)
        #expect(answer.status.code == status)
        #expect(answer.kind.retryAfterSeconds == retryAfter)
    }

    @Test func everyTokenRefusalIs401WithItsOwnCode() {
        for code in AuthenticationFailure.Code.allCases {
            let answer = APIError.from(AuthenticationFailure(code, "reason"))
            #expect(answer.status == .unauthorized)
            #expect(answer.code == code.rawValue)
        }
    }
}
