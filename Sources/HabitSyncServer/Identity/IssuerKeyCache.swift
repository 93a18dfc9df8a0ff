import Foundation
import GuardedFetch
import HabitSyncAuth
import Logging
import Synchronization

/// The identity providers' public keys this process has fetched, per key source (a JWKS URL,
/// an issuer's discovery document, or keys stored inline). Each replica keeps its own.
///
/// - Keys are fetched on first use and, once older than `refreshInterval`, again in the
///   background while requests go on with the ones known.
/// - A `kid` not among them fetches again at once, at most once per `unknownKeyRefreshInterval`
///   per source; concurrent requests share one fetch.
/// - Through an outage known keys keep verifying for `maximumStaleness`; failed fetches are not
///   retried for `failureBackoff`.
public final class IssuerKeyCache: Sendable {
    private struct Entry {
        var keys: IssuerKeySet?
        var fetchedAt: ContinuousClock.Instant?
        var running: Task<Void, Never>?
        var lastAttempt: ContinuousClock.Instant?
        var lastUnknownKeyRefresh: ContinuousClock.Instant?
        var lastFailure: String?
    }

    private let settings: IdentitySettings
    private let fetcher: GuardedFetcher
    private let logger: Logger
    private let metrics: ServerMetrics?
    private let entries = Mutex<[String: Entry]>([:])
    private let clock = ContinuousClock()

    public init(settings: IdentitySettings, logger: Logger, metrics: ServerMetrics? = nil) {
        self.settings = settings
        self.fetcher = GuardedFetcher(policy: settings.fetch)
        self.logger = logger
        self.metrics = metrics
    }

    /// The keys of `configuration`'s source, fetched if none are known.
    public func keys(for configuration: IssuerConfiguration) async throws(IssuerKeysUnavailable) -> IssuerKeySet {
        let source = Self.sourceKey(configuration)
        let now = clock.now
        let (known, mustWait) = entries.withLock { entries -> (IssuerKeySet?, Task<Void, Never>?) in
            var entry = entries[source] ?? Entry()
            defer { entries[source] = entry }
            if let keys = entry.keys, let fetchedAt = entry.fetchedAt, now - fetchedAt < settings.maximumStaleness {
                let retryAllowed = entry.lastAttempt.map { now - $0 >= settings.failureBackoff } ?? true
                if now - fetchedAt >= settings.refreshInterval, entry.running == nil, retryAllowed { _ = startFetch(&entry, configuration, now: now) }
                return (keys, nil)
            }
            if entry.running == nil, let lastAttempt = entry.lastAttempt, now - lastAttempt < settings.failureBackoff { return (nil, nil) }
            return (nil, startFetch(&entry, configuration, now: now))
        }
        if let known { return known }
        if let mustWait { await mustWait.value }
        return try usableKeys(source)
    }

    /// The keys after a token named a `kid` not among the known ones: fetched again unless that was
    /// done for this source within `unknownKeyRefreshInterval` (then the ones known, or those
    /// of the fetch under way).
    public func keysAfterUnknownKey(for configuration: IssuerConfiguration) async throws(IssuerKeysUnavailable) -> IssuerKeySet {
        let source = Self.sourceKey(configuration)
        if case .inline = configuration.keySource { return try await keys(for: configuration) }
        let now = clock.now
        let wait = entries.withLock { entries -> Task<Void, Never>? in
            var entry = entries[source] ?? Entry()
            defer { entries[source] = entry }
            if let running = entry.running { return running }
            if let last = entry.lastUnknownKeyRefresh, now - last < settings.unknownKeyRefreshInterval { return nil }
            entry.lastUnknownKeyRefresh = now
            return startFetch(&entry, configuration, now: now)
        }
        if let wait { await wait.value }
        return try usableKeys(source)
    }

    private func usableKeys(_ source: String) throws(IssuerKeysUnavailable) -> IssuerKeySet {
        let now = clock.now
        let (keys, failure) = entries.withLock { entries -> (IssuerKeySet?, String?) in
            guard let entry = entries[source] else { return (nil, nil) }
            if let keys = entry.keys, let fetchedAt = entry.fetchedAt, now - fetchedAt < settings.maximumStaleness { return (keys, nil) }
            return (nil, entry.lastFailure)
        }
        guard let keys else { throw IssuerKeysUnavailable(source: Self.label(source), reason: failure ?? "no keys fetched yet") }
        return keys
    }

    /// Starts a fetch for `entry` unless one is running; called under the lock.
    private func startFetch(_ entry: inout Entry, _ configuration: IssuerConfiguration, now: ContinuousClock.Instant) -> Task<Void, Never> {
        if let running = entry.running { return running }
        entry.lastAttempt = now
        let task = Task { await self.fetch(configuration) }
        entry.running = task
        return task
    }

    private func fetch(_ configuration: IssuerConfiguration) async {
        let source = Self.sourceKey(configuration)
        let outcome: Result<IssuerKeySet, KeyFetchFailure>
        do throws(KeyFetchFailure) {
            outcome = .success(try await load(configuration))
        } catch {
            outcome = .failure(error)
        }
        let now = clock.now
        entries.withLock { entries in
            var entry = entries[source] ?? Entry()
            entry.running = nil
            switch outcome {
            case .success(let keys):
                entry.keys = keys
                entry.fetchedAt = now
                entry.lastFailure = nil
            case .failure(let failure):
                entry.lastFailure = failure.description
            }
            entries[source] = entry
        }
        switch outcome {
        case .success(let keys):
            metrics?.recordKeyFetch(outcome: "fetched")
            logger.info("issuer keys fetched", metadata: ["issuer": "\(configuration.issuer)", "kids": "\(keys.keyIDs)", "skipped": "\(keys.skipped)"])
        case .failure(let failure):
            metrics?.recordKeyFetch(outcome: "failed")
            logger.warning(
                "issuer keys could not be fetched; known keys (if any) stay in use",
                metadata: [
                    "issuer": "\(configuration.issuer)", "source": "\(Self.label(source))", "reason": "\(failure.description)",
                ])
        }
    }

    /// Fetches (or, inline, reads) and parses the key set.
    private func load(_ configuration: IssuerConfiguration) async throws(KeyFetchFailure) -> IssuerKeySet {
        let bytes: [UInt8]
        switch configuration.keySource {
        case .inline(let text):
            bytes = Array(text.utf8)
        case .jwksURL(let url):
            bytes = try await get(url)
        case .discovery:
            let document = try await get(configuration.discoveryURL)
            let jwksURL = try DiscoveryDocument.jwksURL(document, issuer: configuration.issuer)
            bytes = try await get(jwksURL)
        }
        do {
            return try await IssuerKeySet.parse(bytes)
        } catch {
            throw KeyFetchFailure(error.description)
        }
    }

    private func get(_ url: String) async throws(KeyFetchFailure) -> [UInt8] {
        do {
            return try await fetcher.get(url)
        } catch {
            throw KeyFetchFailure("\(url): \(error.description)")
        }
    }

    /// A source for a log line: an inline key set's text (up to 256 KiB) is not repeated there.
    static func label(_ source: String) -> String {
        source.hasPrefix("inline ") ? "inline (\(source.utf8.count - 7) bytes)" : source
    }

    /// Configurations with the same source share keys (two tenants of one Firebase project's
    /// issuer, say); inline keys are their own text.
    static func sourceKey(_ configuration: IssuerConfiguration) -> String {
        switch configuration.keySource {
        case .jwksURL(let url): "jwks \(url)"
        case .discovery: "discovery \(configuration.discoveryURL)"
        case .inline(let text): "inline \(text)"
        }
    }
}

/// No keys to verify with: never fetched successfully, or the last success is older than
/// the staleness limit. The request is answered 503, not 401: the token may well be good.
public struct IssuerKeysUnavailable: Error, Sendable {
    public let source: String
    public let reason: String
}

struct KeyFetchFailure: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
