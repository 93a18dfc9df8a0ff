import Foundation
import Hummingbird
import NIOCore

/// `GET /openapi.yaml`: the API's contract, shipped with the binary as a resource.
enum OpenAPIDocument {
    /// The document's bytes (`Resources/openapi.yaml`).
    static let bytes: [UInt8]? = Bundle.module.url(forResource: "openapi", withExtension: "yaml").flatMap { FileManager.default.contents(atPath: $0.path) }.map(Array.init)

    static func addRoute(to router: Router<some RequestContext>) {
        router.get("openapi.yaml") { _, _ -> Response in
            guard let bytes else { throw APIError(.notFound, "the OpenAPI document is not installed beside the binary") }
            return Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }
}
