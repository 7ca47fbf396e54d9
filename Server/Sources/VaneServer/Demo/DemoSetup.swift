import Foundation
import VaneServerCore

/// The demo project of a first start: the project, its environments with the demo template
/// published in each (validated and announced like any publish), and a client key.
enum DemoSetup {
    /// Creates the demo project; returns the secret of its production client key.
    static func create(store: ConfigStore, keys: KeyIndex, publisher: TemplatePublisher) async throws -> String {
        try await store.createProject(id: DemoProject.projectId, name: "Demo", actor: .system)
        let checked = try publisher.check(DemoProject.template)
        for environment in DemoProject.environments {
            try await store.createEnvironment(
                projectId: DemoProject.projectId,
                id: environment,
                name: environment.capitalized,
                actor: .system
            )
            try await publisher.publish(
                checked,
                to: EnvironmentKey(projectId: DemoProject.projectId, environmentId: environment),
                expectedVersion: 0,
                actor: .system
            )
        }
        return try await keys.createKey(
            name: "demo production client",
            role: .client,
            projectId: DemoProject.projectId,
            environmentId: "production",
            actor: .system
        ).secret
    }
}
