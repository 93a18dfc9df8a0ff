import ArgumentParser
import Foundation
import HabitSyncDomain
import HabitSyncStore

/// `habitsync-server tenant add-webhook | webhooks | remove-webhook | pause-webhook |
/// resume-webhook | webhook-deliveries | redeliver`: a tenant's webhooks (docs/operations.md,
/// "Webhooks").
extension TenantCommand {
    struct AddWebhook: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-webhook",
            abstract: "Add a webhook endpoint: every push that changes a user's records (in the collections named) is POSTed to it, signed. Prints its id.")

        @OptionGroup var common: CommonOptions
        @Argument(help: "Tenant id or name.") var tenant: String
        @Option(help: "Where deliveries go: https://… (printable ASCII, at most 2048 bytes).") var url: String
        @Option(help: "The collections it hears, separated by commas (default: all).") var collections: String?
        @Option(
            name: .customLong("secret-from-file"),
            help: ArgumentHelp("A file holding the signing secret: whsec_ and 24 to 64 random bytes in base64.", valueName: "file")) var secretFile: String
        @Flag(name: .customLong("include-records"), help: "Deliveries carry the changed records as stored, not only their ids and versions.")
        var includeRecords = false
        @Option(name: .customLong("max-attempts"), help: "Attempts before a delivery is dead (1 to 100; default 12, about 2.4 hours with the default retry base).")
        var maxAttempts: Int = WebhookEndpointRequest.defaultMaximumAttempts
        @Flag(help: "Print one JSON object.") var json = false

        /// Checked before anything is opened.
        func request() throws -> WebhookEndpointRequest {
            let size = (try? FileManager.default.attributesOfItem(atPath: secretFile)[.size] as? Int) ?? nil
            guard let size, size <= 4096, let secret = try? String(contentsOfFile: secretFile, encoding: .utf8) else {
                throw ValidationError("--secret-from-file: cannot read \(secretFile) (a small text file)")
            }
            do {
                return try WebhookEndpointRequest(
                    url: url, collections: collections.map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) },
                    includeRecords: includeRecords, secret: secret, maxAttempts: maxAttempts)
            } catch {
                throw ValidationError(error.description)
            }
        }

        func validate() throws { _ = try request() }

        func run() async throws {
            let request = try request()
            let (found, id) = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                guard try await !DistributionStore(pool: pool).isCitus() else {
                    throw CLIFailure(message: "webhooks are not delivered on Citus yet (deploy/README.md); no endpoint was added")
                }
                let found = try await TenantStore(pool: pool).require(tenant)
                return (found, try await WebhookStore(pool: pool).addEndpoint(tenant: found.id, request))
            }
            if json {
                try JSONLine.print(["tenant": found.id.uuidString.lowercased(), "id": id.uuidString.lowercased()])
            } else {
                print(id.uuidString.lowercased())
            }
        }
    }

    struct Webhooks: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a tenant's webhook endpoints and their deliveries by state (never their secrets).")

        @OptionGroup var common: CommonOptions
        @Argument(help: "Tenant id or name.") var tenant: String
        @Flag(help: "Print one JSON object per line.") var json = false

        func run() async throws {
            let endpoints = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                try await WebhookStore(pool: pool).endpoints(tenant: try await TenantStore(pool: pool).require(tenant).id)
            }
            for endpoint in endpoints {
                if json {
                    try JSONLine.print([
                        "id": endpoint.id.uuidString.lowercased(), "url": endpoint.url,
                        "collections": endpoint.collections.map { $0.map(\.rawValue) as Any } ?? NSNull(), "includeRecords": endpoint.includeRecords,
                        "maxAttempts": endpoint.maxAttempts, "paused": endpoint.paused, "consecutiveFailures": endpoint.consecutiveFailures,
                        "pending": endpoint.pending, "delivered": endpoint.delivered, "dead": endpoint.dead,
                    ])
                } else {
                    let collections = endpoint.collections.map { $0.map(\.rawValue).joined(separator: ",") } ?? "all"
                    print(
                        "\(endpoint.id.uuidString.lowercased())  \(endpoint.paused ? "paused" : "active")  \(endpoint.url)  collections \(collections)"
                            + "\(endpoint.includeRecords ? "  with records" : "")  pending \(endpoint.pending)  delivered \(endpoint.delivered)  dead \(endpoint.dead)"
                            + (endpoint.consecutiveFailures > 0 ? "  failing (\(endpoint.consecutiveFailures) in a row)" : ""))
                }
            }
        }
    }

    /// One endpoint of one tenant, named on the command line.
    struct EndpointArguments: ParsableArguments {
        @Argument(help: "Tenant id or name.") var tenant: String
        @Argument(help: "The endpoint's id (tenant webhooks lists them).") var endpoint: String

        func endpointID() throws -> UUID {
            guard let id = UUID(uuidString: endpoint) else { throw ValidationError("the endpoint must be an id (tenant webhooks lists them)") }
            return id
        }
    }

    struct RemoveWebhook: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove-webhook", abstract: "Remove a webhook endpoint and its deliveries, sent or not.")

        @OptionGroup var common: CommonOptions
        @OptionGroup var target: EndpointArguments

        func validate() throws { _ = try target.endpointID() }

        func run() async throws {
            let endpoint = try target.endpointID()
            let removed = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                try await WebhookStore(pool: pool).removeEndpoint(tenant: try await TenantStore(pool: pool).require(target.tenant).id, endpoint: endpoint)
            }
            guard removed else { throw CLIFailure(message: "the tenant has no webhook endpoint \(endpoint.uuidString.lowercased())") }
            print("removed \(endpoint.uuidString.lowercased())")
        }
    }

    struct PauseWebhook: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pause-webhook", abstract: "Pause a webhook endpoint: its deliveries are still written, and wait until it is resumed.")

        @OptionGroup var common: CommonOptions
        @OptionGroup var target: EndpointArguments

        func validate() throws { _ = try target.endpointID() }

        func run() async throws { try await WebhookPause.set(common: common, target: target, paused: true) }
    }

    struct ResumeWebhook: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "resume-webhook", abstract: "Resume a paused (or resting) webhook endpoint: its waiting deliveries go at once, each user's in order.")

        @OptionGroup var common: CommonOptions
        @OptionGroup var target: EndpointArguments

        func validate() throws { _ = try target.endpointID() }

        func run() async throws { try await WebhookPause.set(common: common, target: target, paused: false) }
    }

    struct WebhookDeliveries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "webhook-deliveries", abstract: "List a tenant's webhook deliveries, the latest first: state, attempts, the last status and error.")

        @OptionGroup var common: CommonOptions
        @Argument(help: "Tenant id or name.") var tenant: String
        @Option(help: "Only this endpoint's.") var endpoint: String?
        @Option(help: "Only deliveries in this state: pending, delivered or dead.") var state: WebhookStore.State?
        @Option(help: "At most this many (1 to 10000).") var limit: Int = 100
        @Flag(help: "Print one JSON object per line.") var json = false

        func validate() throws {
            if let endpoint, UUID(uuidString: endpoint) == nil { throw ValidationError("--endpoint must be an id (tenant webhooks lists them)") }
            guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be from 1 to 10000") }
        }

        func run() async throws {
            let deliveries = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                try await WebhookStore(pool: pool).deliveries(
                    tenant: try await TenantStore(pool: pool).require(tenant).id, endpoint: endpoint.flatMap(UUID.init(uuidString:)), state: state, limit: limit)
            }
            for delivery in deliveries {
                if json {
                    var object: [String: Any] = [
                        "id": delivery.id.uuidString.lowercased(), "endpoint": delivery.endpointID.uuidString.lowercased(), "userId": delivery.userID,
                        "firstVersion": delivery.firstVersion, "state": delivery.state, "attempts": delivery.attempts,
                        "createdAt": WireTime.format(delivery.createdAt),
                    ]
                    object["nextAttemptAt"] = delivery.nextAttemptAt.map(WireTime.format) ?? NSNull()
                    object["lastStatus"] = delivery.lastStatus ?? NSNull()
                    object["lastError"] = delivery.lastError ?? NSNull()
                    object["finishedAt"] = delivery.finishedAt.map(WireTime.format) ?? NSNull()
                    try JSONLine.print(object)
                } else {
                    let last = [delivery.lastStatus.map { "status \($0)" }, delivery.lastError].compactMap { $0 }.joined(separator: ": ")
                    print(
                        "\(delivery.id.uuidString.lowercased())  \(delivery.state)  attempts \(delivery.attempts)  user \(JSONText.string(delivery.userID))"
                            + "  version \(delivery.firstVersion)  \(WireTime.format(delivery.createdAt))" + (last.isEmpty ? "" : "  \(last)"))
                }
            }
        }
    }

    struct Redeliver: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send webhook deliveries again: those named (dead or delivered), or with --dead every dead one. Each goes back to its place in its user's order.")

        @OptionGroup var common: CommonOptions
        @Argument(help: "Tenant id or name.") var tenant: String
        @Argument(help: "Deliveries' ids (tenant webhook-deliveries lists them).") var deliveries: [String] = []
        @Flag(help: "Every dead delivery (of --endpoint, if given).") var dead = false
        @Option(help: "With --dead: only this endpoint's.") var endpoint: String?

        func ids() throws -> [UUID]? {
            guard !dead else {
                guard deliveries.isEmpty else { throw ValidationError("give delivery ids or --dead, not both") }
                return nil
            }
            guard !deliveries.isEmpty else { throw ValidationError("give delivery ids, or --dead") }
            guard endpoint == nil else { throw ValidationError("--endpoint goes with --dead") }
            return try deliveries.map { text in
                guard let id = UUID(uuidString: text) else { throw ValidationError("\(JSONText.string(String(text.prefix(64)))) is not a delivery id") }
                return id
            }
        }

        func validate() throws {
            _ = try ids()
            if let endpoint, UUID(uuidString: endpoint) == nil { throw ValidationError("--endpoint must be an id (tenant webhooks lists them)") }
        }

        func run() async throws {
            let ids = try ids()
            let count = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                try await WebhookStore(pool: pool).redeliver(
                    tenant: try await TenantStore(pool: pool).require(tenant).id, ids: ids, deadOf: endpoint.flatMap(UUID.init(uuidString:)))
            }
            print("\(count) \(count == 1 ? "delivery" : "deliveries") to send again")
        }
    }
}

extension WebhookStore.State: ExpressibleByArgument {}

/// What pause-webhook and resume-webhook share.
enum WebhookPause {
    static func set(common: CommonOptions, target: TenantCommand.EndpointArguments, paused: Bool) async throws {
        let endpoint = try target.endpointID()
        let found = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
            try await WebhookStore(pool: pool).setPaused(tenant: try await TenantStore(pool: pool).require(target.tenant).id, endpoint: endpoint, paused)
        }
        guard found else { throw CLIFailure(message: "the tenant has no webhook endpoint \(endpoint.uuidString.lowercased())") }
        print("\(paused ? "paused" : "resumed") \(endpoint.uuidString.lowercased())")
    }
}
