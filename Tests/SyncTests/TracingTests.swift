import Foundation
import HabitSyncClient
import HabitSyncDomain
import HabitSyncServer
import ServerHarness
import SyncTestSupport
import TestSupport
import Testing

/// Issue 50: OpenTelemetry traces. `habitsync-server serve` run as ops run it, its tracing
/// turned on by the standard `OTEL_*` variables, exporting to the test's own OTLP/HTTP
/// endpoint (`LoopbackTraceReceiver`), which decodes the protobuf spans. The server is stopped
/// with SIGTERM before the spans are read: the exporter sends the last of them as it stops, so
/// nothing here waits for a batch's timer.
@Suite struct TracingTests {
    /// Tracing turned on for a server exporting to `receiver`, every trace kept.
    static func tracingEnvironment(_ receiver: LoopbackTraceReceiver) -> [String] {
        [
            "OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=\(receiver.endpoint)", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
            "OTEL_TRACES_SAMPLER=always_on",
        ]
    }

    static func server(_ world: SyncWorld, directory: URL, environment: [String], arguments: [String] = []) -> ServerProcess {
        ServerProcess(
            binary: HabitSyncBinary.url, databaseURL: world.database.connectionString, logDirectory: directory,
            extraArguments: ["--migrate", "off", "--migrations-dir", TestPostgres.migrationsDirectory.path, "--statement-timeout", "60s"] + arguments,
            launcher: ["/usr/bin/env", "-u", "OTEL_SDK_DISABLED", "-u", "OTEL_TRACES_EXPORTER"] + environment)
    }

    @Test func aSyncIsOneTraceFromItsRequestsToTheRealtimeNotice() async throws {
        let world = try await SyncWorld.make()
        let receiver = try await LoopbackTraceReceiver.start()
        let directory = try makeTemporaryDirectory("habitsync-tracing")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = Self.server(world, directory: directory, environment: Self.tracingEnvironment(receiver))
        try await server.start()

        // The SDK syncs a habit whose name, like the user's id and the token, no span may carry.
        let user = "traced-\(UUID().uuidString.lowercased())"
        let token = try await world.token(user: user)
        let secretName = "Secret habit \(UUID().uuidString)"
        let store = try LocalStore(path: nil, deviceID: "phone")
        let engine = SyncEngine(store: store, baseURL: try #require(URL(string: server.baseURL + "/")), transport: URLSessionTransport.patient()) { token }
        _ = try store.save(Habit(name: secretName, startDate: try #require(LocalDate(Wire.day(-19)))))
        // The user's watch listens: once it hears the change, the listener has handled the
        // notice (and ended its span) before the server is stopped.
        let port = server.port
        let watch = try await onOwnThread { try EventStreamSocket(port: port, token: token, device: "watch") }
        let report = try await engine.sync()
        #expect(report.pushed.applied == 1)
        #expect(try await onOwnThread { try watch.waitFor("event: change", milliseconds: 120_000) })
        #expect(report.traceID.count == 32)
        // A caller's trace is continued; a malformed traceparent starts a trace of its own.
        let callerTrace = "0af7651916cd43dd8448eb211c80319c", callerSpan = "b7ad6b7169203331"
        let honoured = try await TestHTTP.request(
            "GET", "\(server.baseURL)/v1/sync/pull",
            headers: ["Authorization": "Bearer \(token)", "traceparent": "00-\(callerTrace)-\(callerSpan)-01", "X-Request-Id": "honoured"])
        let malformed = try await TestHTTP.request(
            "GET", "\(server.baseURL)/v1/sync/pull",
            headers: ["Authorization": "Bearer \(token)", "traceparent": "00-\(callerTrace)-not-a-parent-id-01", "X-Request-Id": "malformed"])
        #expect(honoured.status == 200)
        #expect(malformed.status == 200)
        // A known path with another method: its trace says 405, as its answer does.
        let wrongMethod = try await TestHTTP.request("DELETE", "\(server.baseURL)/v1/sync/pull", headers: ["Authorization": "Bearer \(token)", "X-Request-Id": "wrong-method"])
        #expect(wrongMethod.status == 405)
        await server.stop()
        await receiver.stop()
        withExtendedLifetime(watch) {}

        let spans = receiver.spans
        #expect(receiver.undecodable == 0)
        #expect(!spans.isEmpty && spans.allSatisfy { $0.serviceName == "habitsync-server" }, "\(Set(spans.map(\.serviceName)))")
        let byID = Dictionary(spans.map { ($0.spanID, $0) }, uniquingKeysWith: { first, _ in first })
        func children(of span: OTLPSpan) -> [OTLPSpan] { spans.filter { $0.parentSpanID == span.spanID } }

        // The sync's requests: one trace, the SDK's, each request a server span whose parent is
        // the SDK's (not a span of the server's).
        let sync = spans.filter { $0.traceID == report.traceID }
        let push = try #require(sync.first { $0.name == "/v1/sync/push" }, "\(sync.map(\.name))")
        #expect(sync.contains { $0.name == "/v1/sync/pull" && $0.kind == 2 })
        #expect(push.kind == 2)
        #expect(!push.parentSpanID.isEmpty && byID[push.parentSpanID] == nil)
        #expect(push.attributes["http.request.method"] == "POST")
        #expect(push.attributes["http.route"] == "/v1/sync/push")
        #expect(push.attributes["http.response.status_code"] == "200")
        #expect(!(push.attributes["habitsync.request_id"] ?? "").isEmpty)

        // Inside it: authentication, the push's plan, the transaction with its statement
        // batches and its commit.
        let steps = children(of: push)
        let authenticate = try #require(steps.first { $0.name == "authenticate" }, "\(steps.map(\.name))")
        #expect(authenticate.attributes["habitsync.tenant_id"] == world.tenant.uuidString.lowercased())
        #expect(authenticate.attributes["enduser.id"] == nil)
        let plan = try #require(steps.first { $0.name == "push.plan" }, "\(steps.map(\.name))")
        #expect(plan.attributes["habitsync.changes"] == "1")
        // The push's own transaction: the one whose commit carries its closing statements (a
        // new server's first push also reads the tenant's limits in a transaction of its own,
        // which ends with COMMIT alone; spans arrive in no set order).
        func closingCommit(of span: OTLPSpan) -> OTLPSpan? {
            children(of: span).first { $0.name == "db.commit" && Int($0.attributes["db.operation.batch.size"] ?? "") ?? 0 >= 1 }
        }
        let transaction = try #require(steps.first { $0.name == "db.transaction" && closingCommit(of: $0) != nil }, "\(steps.map(\.name))")
        let statements = children(of: transaction)
        #expect(statements.contains { $0.name == "db.pipeline" || $0.name == "db.query" }, "\(statements.map(\.name))")
        let commit = try #require(closingCommit(of: transaction))
        #expect(commit.kind == 3)
        #expect(commit.attributes["db.system.name"] == "postgresql")
        // The realtime notice, heard by the server's listener, continues the push's trace.
        let notice = try #require(sync.first { $0.name == "realtime.notice" }, "\(sync.map(\.name))")
        #expect(notice.parentSpanID == transaction.spanID)
        #expect(notice.kind == 5)
        #expect(notice.attributes["habitsync.streams_told"] == "1")

        // The caller's trace id and parent, taken as sent.
        let continued = try #require(spans.first { $0.attributes["habitsync.request_id"] == "honoured" })
        #expect(continued.traceID == callerTrace)
        #expect(continued.parentSpanID == callerSpan)
        let refused = try #require(spans.first { $0.attributes["habitsync.request_id"] == "wrong-method" })
        #expect(refused.attributes["http.response.status_code"] == "405" && refused.attributes["habitsync.error_code"] == "method_not_allowed", "\(refused.attributes)")
        let fresh = try #require(spans.first { $0.attributes["habitsync.request_id"] == "malformed" })
        #expect(fresh.parentSpanID.isEmpty)
        #expect(fresh.traceID.count == 32 && fresh.traceID != callerTrace && fresh.traceID != String(repeating: "0", count: 32))

        // No payload, token or user id in any name or attribute.
        for span in spans {
            for text in [span.name] + span.attributes.keys + span.attributes.values {
                #expect(!text.contains(user) && !text.contains(secretName) && !text.contains(token), "\(span.name): \(text.prefix(80))")
            }
        }
    }

    @Test func tracingIsOffUntilTheEnvironmentTurnsItOnAndUsersAreNamedOnlyWhenAsked() async throws {
        let world = try await SyncWorld.make()
        let receiver = try await LoopbackTraceReceiver.start()
        let directory = try makeTemporaryDirectory("habitsync-tracing-off")
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = try await world.token(user: "ada")
        func push(_ server: ServerProcess) async throws {
            let reply = try await SyncClient(baseURL: server.baseURL, token: token, device: "phone", connections: 1)
                .push([Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit())])
            #expect(reply.status == 200)
        }
        // Only the endpoint named: had tracing been on by default, its spans would arrive.
        let untraced = Self.server(world, directory: directory, environment: ["OTEL_EXPORTER_OTLP_ENDPOINT=\(receiver.endpoint)"])
        try await untraced.start()
        try await push(untraced)
        await untraced.stop()
        #expect(receiver.exports == 0 && receiver.spans.isEmpty)

        let traced = Self.server(world, directory: directory, environment: Self.tracingEnvironment(receiver), arguments: ["--trace-user-ids", "record"])
        try await traced.start()
        try await push(traced)
        await traced.stop()
        await receiver.stop()
        let authenticate = try #require(receiver.spans.first { $0.name == "authenticate" }, "\(receiver.spans.map(\.name))")
        #expect(authenticate.attributes["enduser.id"] == "ada")
    }

    @Test func tracingSettingsAreTheStandardOnesAndWhatThisBuildCannotDoIsRefused() async throws {
        #expect(try ServerTracing.isEnabled(environment: [:]) == false)
        #expect(try ServerTracing.isEnabled(environment: ["OTEL_TRACES_EXPORTER": "none"]) == false)
        #expect(try ServerTracing.isEnabled(environment: ["OTEL_TRACES_EXPORTER": "otlp"]) == true)
        #expect(try ServerTracing.isEnabled(environment: ["OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"]) == false)
        #expect(try ServerTracing.isEnabled(environment: ["OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"]) == true)
        #expect(throws: ServerTracing.SettingError.self) { try ServerTracing.isEnabled(environment: ["OTEL_TRACES_EXPORTER": "zipkin"]) }
        #expect(throws: ServerTracing.SettingError.self) {
            try ServerTracing.isEnabled(environment: ["OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"])
        }
        // `serve` refuses them before it opens a database, naming the variable.
        let refused = try await HabitSyncBinary.run(
            ["serve", "--port", "0"], environment: ["OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "DATABASE_URL": "postgres://127.0.0.1:1/none"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL may be http/protobuf or http/json"), "\(refused.stderr.suffix(300))")
    }
}
