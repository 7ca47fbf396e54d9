/// An environment's address: project and environment ids.
struct EnvironmentKey: Sendable, Hashable, CustomStringConvertible {
    /// The project's id.
    var projectId: String
    /// The environment's id.
    var environmentId: String

    /// Creates a key.
    init(projectId: String, environmentId: String) {
        self.projectId = projectId
        self.environmentId = environmentId
    }

    /// `project/environment`.
    var description: String { "\(projectId)/\(environmentId)" }
}
