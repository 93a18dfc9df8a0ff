import CLibPQ

/// A notice or warning the server sent beside a statement's result (`RAISE NOTICE`, a Citus
/// worker's `WARNING` relayed by the coordinator), not an error.
public struct PGNotice: Sendable, Equatable {
    /// `WARNING`, `NOTICE`, `INFO`, `LOG` or `DEBUG`, never translated.
    public let severity: String
    public let sqlState: String?
    public let message: String
    public let detail: String?

    public init(severity: String, sqlState: String?, message: String, detail: String?) {
        self.severity = severity
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
    }

    init(_ result: OpaquePointer) {
        let field = { (code: Int32) in resultField(result, code) }
        self.init(
            severity: field(CLIBPQ_DIAG_SEVERITY_NONLOCALIZED) ?? "NOTICE", sqlState: field(CLIBPQ_DIAG_SQLSTATE),
            message: field(CLIBPQ_DIAG_MESSAGE_PRIMARY) ?? "", detail: field(CLIBPQ_DIAG_MESSAGE_DETAIL))
    }
}

/// One field of an error or notice result (`PQresultErrorField`), nil when absent.
func resultField(_ result: OpaquePointer, _ code: Int32) -> String? {
    guard let value = PQresultErrorField(result, code) else { return nil }
    return String(cString: value)
}

/// Where a configuration's connections deliver notices. libpq's own default prints them raw
/// on the process's stderr, outside the structured log; every connection opened here hands
/// them to `handler` instead (or drops them, with none).
///
/// A class so that libpq can hold a pointer to it: each connection keeps its sink alive for as
/// long as its handle, and libpq calls the receiver only inside calls on that handle.
public final class PGNoticeSink: Sendable {
    let handler: (@Sendable (PGNotice) -> Void)?

    public init(_ handler: (@Sendable (PGNotice) -> Void)?) { self.handler = handler }

    /// Drops every notice.
    public static let discard = PGNoticeSink(nil)

    /// Makes libpq deliver `pointer`'s notices to this sink. The caller keeps the sink alive
    /// until `PQfinish`.
    func install(on pointer: OpaquePointer) {
        PQsetNoticeReceiver(pointer, receivePGNotice, Unmanaged.passUnretained(self).toOpaque())
    }
}

/// libpq's notice receiver: the notice arrives as a result libpq frees after the call.
private func receivePGNotice(_ argument: UnsafeMutableRawPointer?, _ result: OpaquePointer?) {
    guard let argument, let result else { return }
    let sink = Unmanaged<PGNoticeSink>.fromOpaque(argument).takeUnretainedValue()
    sink.handler?(PGNotice(result))
}
