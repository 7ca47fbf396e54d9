import VaneCore

/// A project: one app or product, with its environments.
public struct Project: Sendable, Hashable {
    /// The id used in URLs, `^[a-z0-9][a-z0-9-]{0,62}$`.
    public var id: String
    /// The display name.
    public var name: String
    /// When it was created, in milliseconds since 1970.
    public var createTime: Int64
}

/// An environment of a project (`production`, `staging`), with its own template history.
public struct Environment: Sendable, Hashable {
    /// The project's id.
    public var projectId: String
    /// The id used in URLs.
    public var id: String
    /// The display name.
    public var name: String
    /// When it was created, in milliseconds since 1970.
    public var createTime: Int64
    /// The current template version; 0 before the first publish.
    public var templateVersion: Int64
}

/// One published template version. Versions are immutable.
public struct StoredVersion: Sendable {
    /// The project's id.
    public var projectId: String
    /// The environment's id.
    public var environmentId: String
    /// The version number, from 1.
    public var number: Int64
    /// When it was published, in milliseconds since 1970.
    public var updateTime: Int64
    /// The template, with its `version` metadata filled in.
    public var template: ConfigTemplate
}

/// What an API key may do.
public enum KeyRole: String, Sendable, Hashable, CaseIterable, Codable {
    /// Everything, on every project.
    case admin
    /// Read full templates of one environment, for local evaluation in server-side SDKs.
    case server
    /// Fetch evaluated values of one environment; never sees conditions or other users' values.
    case client
}

/// An API key as stored: never the key itself, only its SHA-256.
public struct StoredKey: Sendable, Hashable {
    /// The key's id, shown in lists and audit entries.
    public var id: String
    /// What the key is for ("ios-app").
    public var name: String
    /// What it may do.
    public var role: KeyRole
    /// The project a server or client key belongs to.
    public var projectId: String?
    /// The environment a server or client key belongs to.
    public var environmentId: String?
    /// When it was created.
    public var createTime: Int64
    /// When it was revoked; revoked keys authenticate nothing.
    public var revokeTime: Int64?
}

/// Who did something, for the audit log.
public struct Actor: Sendable, Hashable {
    /// The API key used, if any (nil for the server itself).
    public var keyId: String?
    /// The key's name, or `vane` for the server itself.
    public var name: String

    /// The server acting on its own (start-up, demo data).
    public static let system = Actor(keyId: nil, name: "vane")

    /// Creates an actor.
    public init(keyId: String?, name: String) {
        self.keyId = keyId
        self.name = name
    }
}

/// One audit log entry.
public struct AuditEntry: Sendable, Hashable {
    /// The entry's id.
    public var id: String
    /// When, in milliseconds since 1970.
    public var time: Int64
    /// Who.
    public var actor: Actor
    /// What: `template.publish`, `template.rollback`, `key.create`, `key.revoke`, `project.create`, `environment.create`.
    public var action: String
    /// The project concerned, if any.
    public var projectId: String?
    /// The environment concerned, if any.
    public var environmentId: String?
    /// One line for people.
    public var summary: String
    /// Details for machines (for a publish: the parameters and conditions changed).
    public var details: JSONValue
}

/// A page of results and the token for the next one.
public struct Page<Element: Sendable>: Sendable {
    /// The results.
    public var items: [Element]
    /// Pass this to get the next page; nil on the last page.
    public var nextPageToken: String?
}
