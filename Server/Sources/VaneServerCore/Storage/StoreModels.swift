package import SQLKit
package import VaneCore

/// A project: one app or product, with its environments.
package struct Project: Sendable, Hashable {
    /// The id used in URLs, `^[a-z0-9][a-z0-9-]{0,62}$`.
    package var id: String
    /// The display name.
    package var name: String
    /// When it was created, in milliseconds since 1970.
    package var createTime: Int64
}

/// An environment of a project (`production`, `staging`), with its own template history.
package struct Environment: Sendable, Hashable {
    /// The project's id.
    package var projectId: String
    /// The id used in URLs.
    package var id: String
    /// The display name.
    package var name: String
    /// When it was created, in milliseconds since 1970.
    package var createTime: Int64
    /// The current template version; 0 before the first publish.
    package var templateVersion: Int64
    /// The colour people tell it apart by, when an admin set one.
    package var colour: EnvironmentColour? = nil
}

/// One published template version. Versions are immutable.
package struct StoredVersion: Sendable {
    /// The project's id.
    package var projectId: String
    /// The environment's id.
    package var environmentId: String
    /// The version number, from 1.
    package var number: Int64
    /// When it was published, in milliseconds since 1970.
    package var updateTime: Int64
    /// The template, with its `version` metadata filled in.
    package var template: ConfigTemplate
    /// The template as stored: compact JSON, the database's own text, so nobody serializes it again.
    package var templateJSON: String
}

/// What an API key may do.
package enum KeyRole: String, Sendable, Hashable, CaseIterable, Codable {
    /// Everything, on every project.
    case admin
    /// Read full templates of one environment, for local evaluation in server-side SDKs.
    case server
    /// Fetch evaluated values of one environment; never sees conditions or other users' values.
    case client
}

/// An API key as stored: never the key itself, only its SHA-256.
package struct StoredKey: Sendable, Hashable {
    /// The key's id, shown in lists and audit entries.
    package var id: String
    /// What the key is for ("ios-app").
    package var name: String
    /// What it may do.
    package var role: KeyRole
    /// The project a server or client key belongs to.
    package var projectId: String?
    /// The environment a server or client key belongs to.
    package var environmentId: String?
    /// When it was created.
    package var createTime: Int64
    /// When it was revoked; revoked keys authenticate nothing.
    package var revokeTime: Int64?
}

/// Who did something, for the audit log.
package struct Actor: Sendable, Hashable {
    /// The API key used, if any (nil for a person and for the server itself).
    package var keyId: String?
    /// The person, when the change came from the console.
    package var userId: String?
    /// The key's name, the person's email, or `vane` for the server itself.
    package var name: String

    /// The server acting on its own (start-up, demo data).
    package static let system = Actor(keyId: nil, name: "vane")

    /// Creates an actor.
    package init(keyId: String?, userId: String? = nil, name: String) {
        self.keyId = keyId
        self.userId = userId
        self.name = name
    }
}

/// One audit log entry.
package struct AuditEntry: Sendable, Hashable {
    /// The entry's id.
    package var id: String
    /// When, in milliseconds since 1970.
    package var time: Int64
    /// Who.
    package var actor: Actor
    /// What: `template.publish`, `template.rollback`, `key.create`, `key.revoke`, `project.create`, `environment.create`.
    package var action: String
    /// The project concerned, if any.
    package var projectId: String?
    /// The environment concerned, if any.
    package var environmentId: String?
    /// One line for people.
    package var summary: String
    /// Details for machines (for a publish: the parameters and conditions changed).
    package var details: JSONValue

    /// The flag keys the entry changed (`details.flags`), sorted.
    package var flags: [String] {
        guard case .object(let object) = details, case .array(let keys)? = object["flags"] else { return [] }
        return keys.compactMap(\.stringValue)
    }

    /// The message the change was made with (a publish's description, a kill switch's reason).
    package var message: String? {
        guard case .object(let object) = details, case .string(let text)? = object["message"], !text.isEmpty else {
            return nil
        }
        return text
    }

    /// What kind of change it was, for people: ``AuditKind``.
    package var kind: AuditKind { AuditKind(action: action, details: details) }
}

/// A page of results and the token for the next one.
package struct Page<Element: Sendable>: Sendable {
    /// The results.
    package var items: [Element]
    /// Pass this to get the next page; nil on the last page.
    package var nextPageToken: String?
}

/// Which audit entries to read, besides the project and environment.
package struct AuditFilter: Sendable, Hashable {
    /// A key id, a person's id, or a key name or email (any case).
    package var actor: String?
    /// An exact action, such as `template.publish`.
    package var action: String?
    /// Entries at or after this time (milliseconds since 1970).
    package var startTime: Int64?
    /// Entries before this time.
    package var endTime: Int64?
    /// Entries that changed this flag key (exactly).
    package var flag: String?

    package init(
        actor: String? = nil,
        action: String? = nil,
        startTime: Int64? = nil,
        endTime: Int64? = nil,
        flag: String? = nil
    ) {
        self.actor = actor
        self.action = action
        self.startTime = startTime
        self.endTime = endTime
        self.flag = flag
    }
}

/// Work a publish does in its own transaction, after the new version's row (numbered as given)
/// and before the commit: throwing undoes the publish. A rollout's step claims its row here.
package typealias PublishAlongside = @Sendable (any SQLDatabase, Int64) async throws -> Void
