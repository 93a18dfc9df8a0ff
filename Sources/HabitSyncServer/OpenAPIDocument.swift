import Foundation
import Hummingbird
import NIOCore

/// `GET /openapi.yaml`: the API's contract, compiled into the binary (SwiftPM's
/// `embedInCode`): an installed binary needs nothing beside it. (As a bundle resource it was
/// looked for beside the binary, and `Bundle.module` trapped where it was not: one
/// unauthenticated request ended an installed server.)
enum OpenAPIDocument {
    /// The document's bytes (`Resources/openapi.yaml`).
    static let bytes: [UInt8] = PackageResources.openapi_yaml

    static func addRoute(to router: Router<some RequestContext>) {
        router.get("openapi.yaml") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }
}
