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

    public init(connectionString: String, applicationName: String = "habitsync-server", connectTimeoutSeconds: Int = 5, role: String? = nil, sessionSettings: [String: String] = [:]) {
        self.connectionString = connectionString
        self.applicationName = applicationName
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.role = role
        self.sessionSettings = sessionSettings
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
