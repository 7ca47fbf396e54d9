import VaneCore

/// A project: one app or product, with its environments.
struct Project: Sendable, Hashable {
    /// The id used in URLs, `^[a-z0-9][a-z0-9-]{0,62}$`.
    var id: String
    /// The display name.
    var name: String
    /// When it was created, in milliseconds since 1970.
    var createTime: Int64
}

/// An environment of a project (`production`, `staging`), with its own template history.
struct Environment: Sendable, Hashable {
    /// The project's id.
    var projectId: String
    /// The id used in URLs.
    var id: String
    /// The display name.
    var name: String
    /// When it was created, in milliseconds since 1970.
    var createTime: Int64
    /// The current template version; 0 before the first publish.
    var templateVersion: Int64
}

/// One published template version. Versions are immutable.
struct StoredVersion: Sendable {
    /// The project's id.
    var projectId: String
    /// The environment's id.
    var environmentId: String
    /// The version number, from 1.
    var number: Int64
    /// When it was published, in milliseconds since 1970.
    var updateTime: Int64
    /// The template, with its `version` metadata filled in.
    var template: ConfigTemplate
    /// The template as stored: compact JSON, the database's own text, so nobody serializes it again.
    var templateJSON: String
}

/// What an API key may do.
enum KeyRole: String, Sendable, Hashable, CaseIterable, Codable {
    /// Everything, on every project.
    case admin
    /// Read full templates of one environment, for local evaluation in server-side SDKs.
    case server
    /// Fetch evaluated values of one environment; never sees conditions or other users' values.
    case client
}

/// An API key as stored: never the key itself, only its SHA-256.
struct StoredKey: Sendable, Hashable {
    /// The key's id, shown in lists and audit entries.
    var id: String
    /// What the key is for ("ios-app").
    var name: String
    /// What it may do.
    var role: KeyRole
    /// The project a server or client key belongs to.
    var projectId: String?
    /// The environment a server or client key belongs to.
    var environmentId: String?
    /// When it was created.
    var createTime: Int64
    /// When it was revoked; revoked keys authenticate nothing.
    var revokeTime: Int64?
}

/// Who did something, for the audit log.
struct Actor: Sendable, Hashable {
    /// The API key used, if any (nil for a person and for the server itself).
    var keyId: String?
    /// The person, when the change came from the console.
    var userId: String?
    /// The key's name, the person's email, or `vane` for the server itself.
    var name: String

    /// The server acting on its own (start-up, demo data).
    static let system = Actor(keyId: nil, name: "vane")

    /// Creates an actor.
    init(keyId: String?, userId: String? = nil, name: String) {
        self.keyId = keyId
        self.userId = userId
        self.name = name
    }
}

/// One audit log entry.
struct AuditEntry: Sendable, Hashable {
    /// The entry's id.
    var id: String
    /// When, in milliseconds since 1970.
    var time: Int64
    /// Who.
    var actor: Actor
    /// What: `template.publish`, `template.rollback`, `key.create`, `key.revoke`, `project.create`, `environment.create`.
    var action: String
    /// The project concerned, if any.
    var projectId: String?
    /// The environment concerned, if any.
    var environmentId: String?
    /// One line for people.
    var summary: String
    /// Details for machines (for a publish: the parameters and conditions changed).
    var details: JSONValue
}

/// A page of results and the token for the next one.
struct Page<Element: Sendable>: Sendable {
    /// The results.
    var items: [Element]
    /// Pass this to get the next page; nil on the last page.
    var nextPageToken: String?
}

/// Which audit entries to read, besides the project and environment.
struct AuditFilter: Sendable, Hashable {
    /// A key id, a person's id, or a key name or email (any case).
    var actor: String?
    /// An exact action, such as `template.publish`.
    var action: String?
    /// Entries at or after this time (milliseconds since 1970).
    var startTime: Int64?
    /// Entries before this time.
    var endTime: Int64?
}
