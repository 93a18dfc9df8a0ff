import OTel
import ServiceLifecycle
import Tracing

/// Tracing for `serve` (docs/operations.md, "Tracing"): off unless the operator names an
/// exporter with the standard `OTEL_TRACES_EXPORTER=otlp`. Then every request is a trace
/// exported over OTLP/HTTP, configured by the other standard variables (`OTEL_EXPORTER_OTLP_*`,
/// `OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`, `OTEL_BSP_*`, `OTEL_SERVICE_NAME`,
/// `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_PROPAGATORS`). swift-otel exports the logs and metrics
/// too; the server keeps its own (stderr, `/metrics`), so only traces are turned on.
public enum ServerTracing {
    /// Why the environment's tracing settings cannot be used: the variable and the rule.
    public struct SettingError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Whether the environment turns tracing on. Off when `OTEL_SDK_DISABLED` is true or
    /// `OTEL_TRACES_EXPORTER` is unset or `none`; anything but `otlp` is refused by name, and so
    /// is the gRPC protocol, which this build leaves out.
    public static func isEnabled(environment: [String: String]) throws -> Bool {
        if environment["OTEL_SDK_DISABLED"]?.lowercased() == "true" { return false }
        switch environment["OTEL_TRACES_EXPORTER"]?.lowercased() {
        case nil, "", "none": return false
        case "otlp": break
        case let other?:
            throw SettingError(description: "OTEL_TRACES_EXPORTER may be otlp or none, not '\(other.prefix(40))'")
        }
        // The traces' own variable wins over the shared one, as the specification says.
        let chosen = ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]
            .compactMap { name in environment[name].map { (name: name, value: $0.lowercased()) } }.first { !$0.value.isEmpty }
        if let chosen, chosen.value != "http/protobuf", chosen.value != "http/json" {
            throw SettingError(
                description: "\(chosen.name) may be http/protobuf or http/json (this build exports OTLP over HTTP only), not '\(chosen.value.prefix(40))'")
        }
        return true
    }

    /// Makes the process's tracer (`InstrumentationSystem`, which Hummingbird and the store's
    /// spans use) and returns the exporter's service, to run beside the server: it sends the
    /// spans in batches and the last of them at shutdown. Called once per process.
    public static func bootstrap() throws -> any Service {
        var configuration = OTel.Configuration.default
        configuration.serviceName = "habitsync-server"
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.enabled = true
        // The environment's `OTEL_*` variables override these (swift-otel reads them).
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(backend.factory)
        return backend.service
    }
}
