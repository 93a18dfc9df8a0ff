import CLibPQ

/// How to reach PostgreSQL: a libpq connection URI (`postgres://…`) or key/value conninfo
/// string, passed to libpq as it is, so no connection string is ever built by interpolation.
public struct PGConnectionConfiguration: Sendable {
    public var connectionString: String
    /// Reported in `pg_stat_activity` unless the connection string names one.
    public var applicationName: String
    /// Seconds libpq waits for a connection before giving up.
    public var connectTimeoutSeconds: Int
    /// A role to `SET ROLE` to right after connecting (the request role, which is not the
    /// tables' owner and so cannot bypass row-level security). Nil keeps the login role.
    public var role: String?
    /// Server settings for every session of this configuration (`set_config(name, value,
    /// false)` right after connecting), such as turning off parallel query for short requests.
    public var sessionSettings: [String: String]
    /// The connection string names a transaction pooler (PgBouncer with `pool_mode =
    /// transaction`): a server connection serves other clients between our transactions, so
    /// nothing is set on the session. The role, the time zone, the date style and the session
    /// settings are set with `SET LOCAL` in every transaction instead (they always are; this
    /// only drops the session-level copy), and statements outside a transaction are refused
    /// by the pool's `withConnection`, which runs them in one.
    public var transactionPooling: Bool
    /// Statements are prepared once per session under a name and executed by name. A
    /// transaction pooler before PgBouncer 1.21 (or with `max_prepared_statements = 0`) cannot
    /// follow named statements across server connections: turn this off there, and every
    /// statement goes as an unnamed one.
    public var namedPreparedStatements: Bool
    /// Where the connections' notices and warnings go (`PGNoticeSink`); never raw to stderr.
    public var notices: PGNoticeSink
    /// A transaction's own settings go as one `SET LOCAL` command each, rather than as one
    /// `set_config(…, true)` statement for all: what a Citus coordinator propagates to its
    /// workers (`citus.propagate_set_commands`) is the commands.
    public var localSettingsAsCommands: Bool
    /// Another server of the same cluster: its host and port replace the connection string's,
    /// everything else (user, password, database, TLS) is kept. How a Citus coordinator's
    /// connection string reaches each node. A string that names `hostaddr` keeps it: name the
    /// host instead where nodes are to be reached this way.
    public var node: PGNodeAddress?

    public init(
        connectionString: String, applicationName: String = "habitsync-server", connectTimeoutSeconds: Int = 5, role: String? = nil,
        sessionSettings: [String: String] = [:], transactionPooling: Bool = false, namedPreparedStatements: Bool = true,
        notices: PGNoticeSink = .discard, localSettingsAsCommands: Bool = false
    ) {
        self.localSettingsAsCommands = localSettingsAsCommands
        self.connectionString = connectionString
        self.applicationName = applicationName
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.role = role
        self.sessionSettings = sessionSettings
        self.transactionPooling = transactionPooling
        self.namedPreparedStatements = namedPreparedStatements
        self.notices = notices
    }

    /// The same configuration for `node` of the same cluster.
    public func at(_ node: PGNodeAddress) -> PGConnectionConfiguration {
        var copy = self
        copy.node = node
        return copy
    }

    /// What every session or transaction of this configuration sets first: UTC, ISO dates and
    /// intervals, warnings only, the settings, then the role.
    private var commonSettings: [PGLocalSetting] {
        [
            PGLocalSetting("TimeZone", "UTC"), PGLocalSetting("DateStyle", "ISO, YMD"), PGLocalSetting("IntervalStyle", "iso_8601"),
            PGLocalSetting("client_min_messages", "warning"),
        ] + sessionSettings.sorted(by: { $0.key < $1.key }).map { PGLocalSetting($0.key, $0.value) }
    }

    /// A session's setup, as `SET` commands in one text (the configured role last).
    func sessionSetupSQL() -> String {
        (commonSettings + (role.map { [PGLocalSetting("role", $0)] } ?? [])).map { $0.command(local: false) }.joined(separator: "; ")
    }

    /// The same for a transaction, as settings (`PGPool.withTransaction` sends them as one
    /// statement, or as `SET LOCAL` commands); a `.login` transaction sets `ROLE NONE`.
    func transactionSettings(role transactionRole: TransactionRole) -> [PGLocalSetting] {
        if transactionRole == .login { return commonSettings + [PGLocalSetting("role", "none")] }
        return commonSettings + (role.map { [PGLocalSetting("role", $0)] } ?? [])
    }

    /// Checks the connection string's syntax without connecting. The message never repeats
    /// the string itself, which may hold a password.
    public static func validate(_ connectionString: String) throws(PGError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &errorMessage) else {
            let message = errorMessage.map { String(cString: $0) } ?? "invalid connection string"
            if let errorMessage { PQfreemem(errorMessage) }
            throw PGError(kind: .client, message: message.trimmingTrailingNewlines())
        }
        PQconninfoFree(options)
    }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var text = self
        while text.last == "\n" || text.last == " " { text.removeLast() }
        return text
    }
}

/// A setting a transaction sets for itself, until it ends (`SET LOCAL name = value`, or
/// `set_config(name, value, true)`).
public struct PGLocalSetting: Sendable, Equatable {
    public let name: String
    public let value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }

    /// As a `SET LOCAL` command (quoted name and value; a value holding NUL cannot be quoted
    /// and is refused where settings are made).
    public var command: String { command(local: true) }

    /// As a `SET LOCAL` command, or a session's `SET`.
    func command(local: Bool) -> String {
        let set = local ? "SET LOCAL " : "SET "
        return name == "role"
            ? set + "ROLE " + (value == "none" ? "NONE" : PGQuery.quoteIdentifier(value))
            : set + PGQuery.quoteIdentifier(name) + " TO " + PGQuery.quoteLiteral(value)
    }

    /// All of `settings` as one statement, the values bound as parameters.
    static func oneStatement(_ settings: [PGLocalSetting]) -> PGQuery {
        var query: PGQuery = "SELECT "
        for (index, setting) in settings.enumerated() {
            let call: PGQuery = "set_config(\(setting.name), \(setting.value), true)"
            if index > 0 { query.append(", " as PGFragment) }
            query.append(call)
        }
        return query
    }
}
