import VaneCore

/// A person's unpublished edits to one environment's template, kept on the server so they
/// survive a reload and other editors can see that someone is working there.
struct Draft: Sendable, Hashable {
    /// The environment the draft will be published to.
    var environment: EnvironmentKey
    /// Whose draft it is.
    var userId: String
    /// The live version the draft started from: the base of a three-way merge when someone
    /// published in between.
    var baseVersion: Int64
    /// The whole template as the person left it.
    var template: ConfigTemplate
    /// Parameters and conditions added, removed or changed against the base version.
    var changeCount: Int
    /// When it was started, in milliseconds since 1970.
    var createTime: Int64
    /// When it was last saved, in milliseconds since 1970.
    var updateTime: Int64
    /// Which stored text this draft was read from, on this node: reading the same text again
    /// gives the same revision, a changed text (saved here or on another node) a new one. Work
    /// derived from a draft is kept under it (``DraftStore/draft(_:userId:)`` sets it; 0 before).
    var revision: UInt64 = 0

    /// Whose draft of which environment, as what a node keeps about it is keyed.
    var personKey: String { environment.personKey(userId) }
}

extension EnvironmentKey {
    /// One person in this environment, as a dictionary key (what a node keeps per draft).
    func personKey(_ userId: String) -> String {
        "\(projectId)\u{0}\(environmentId)\u{0}\(userId)"
    }
}

/// Somebody's draft as listed to others: who, since when, on which version.
struct DraftSummary: Sendable, Hashable {
    var userId: String
    var userName: String
    var email: String
    var baseVersion: Int64
    var changeCount: Int
    var updateTime: Int64
}

/// A named evaluation context shared by a project's people ("German iOS user on 2.1").
struct SavedContext: Sendable, Hashable {
    var projectId: String
    var name: String
    /// The context as the JSON the evaluation API reads (`randomizationId`, attributes).
    var context: JSONValue
    var createTime: Int64
}
