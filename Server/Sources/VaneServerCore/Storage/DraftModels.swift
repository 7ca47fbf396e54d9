package import VaneCore

/// A person's unpublished edits to one environment's template, kept on the server so they
/// survive a reload and other editors can see that someone is working there.
package struct Draft: Sendable, Hashable {
    /// The environment the draft will be published to.
    package var environment: EnvironmentKey
    /// Whose draft it is.
    package var userId: String
    /// The live version the draft started from: the base of a three-way merge when someone
    /// published in between.
    package var baseVersion: Int64
    /// The whole template as the person left it.
    package var template: ConfigTemplate
    /// Parameters and conditions added, removed or changed against the base version.
    package var changeCount: Int
    /// When it was started, in milliseconds since 1970.
    package var createTime: Int64
    /// When it was last saved, in milliseconds since 1970.
    package var updateTime: Int64
    /// Which stored text this draft was read from, on this node: reading the same text again
    /// gives the same revision, a changed text (saved here or on another node) a new one. Work
    /// derived from a draft is kept under it (``DraftStore/draft(_:userId:)`` sets it; 0 before).
    package var revision: UInt64 = 0

    package init(
        environment: EnvironmentKey,
        userId: String,
        baseVersion: Int64,
        template: ConfigTemplate,
        changeCount: Int,
        createTime: Int64,
        updateTime: Int64,
        revision: UInt64 = 0
    ) {
        self.environment = environment
        self.userId = userId
        self.baseVersion = baseVersion
        self.template = template
        self.changeCount = changeCount
        self.createTime = createTime
        self.updateTime = updateTime
        self.revision = revision
    }

    /// Whose draft of which environment, as what a node keeps about it is keyed.
    package var personKey: String { environment.personKey(userId) }
}

extension EnvironmentKey {
    /// One person in this environment, as a dictionary key (what a node keeps per draft).
    package func personKey(_ userId: String) -> String {
        "\(projectId)\u{0}\(environmentId)\u{0}\(userId)"
    }
}

/// Somebody's draft as listed to others: who, since when, on which version.
package struct DraftSummary: Sendable, Hashable {
    package var userId: String
    package var userName: String
    package var email: String
    package var baseVersion: Int64
    package var changeCount: Int
    package var updateTime: Int64
}

/// A named evaluation context shared by a project's people ("German iOS user on 2.1").
package struct SavedContext: Sendable, Hashable {
    package var projectId: String
    package var name: String
    /// The context as the JSON the evaluation API reads (`randomizationId`, attributes).
    package var context: JSONValue
    package var createTime: Int64

    package init(projectId: String, name: String, context: JSONValue, createTime: Int64) {
        self.projectId = projectId
        self.name = name
        self.context = context
        self.createTime = createTime
    }
}
