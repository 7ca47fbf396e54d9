/// An environment's address: project and environment ids.
package struct EnvironmentKey: Sendable, Hashable, CustomStringConvertible {
    /// The project's id.
    package var projectId: String
    /// The environment's id.
    package var environmentId: String

    /// Creates a key.
    package init(projectId: String, environmentId: String) {
        self.projectId = projectId
        self.environmentId = environmentId
    }

    /// `project/environment`.
    package var description: String { "\(projectId)/\(environmentId)" }
}
