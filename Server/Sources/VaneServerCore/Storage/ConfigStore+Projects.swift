import Foundation
import Logging
import SQLKit
package import VaneCore

// Projects and their environments: created once, listed, and checked to exist before anything is written under them.
extension ConfigStore {
    /// Creates a project.
    /// - Throws: ``StorageError/projectExists(_:)``.
    @discardableResult
    package func createProject(id: String, name: String, actor: Actor) async throws -> Project {
        let project = Project(id: id, name: name, createTime: Clock.nowMilliseconds())
        do {
            try await engine.transaction { database in
                try await database.raw(
                    "INSERT INTO projects (id, name, create_time) VALUES (\(bind: id), \(bind: name), \(bind: project.createTime))"
                ).run()
                try await Self.insertAudit(
                    database,
                    actor: actor,
                    action: .projectCreate,
                    projectId: id,
                    environmentId: nil,
                    summary: "created project \(id)",
                    details: ["name": .string(name)]
                )
            }
        } catch  where StoreErrors.isUniqueViolation(error) {
            throw StorageError.projectExists(id)
        }
        return project
    }

    /// Every project, by id.
    package func projects() async throws -> [Project] {
        try await engine.withSession { database in
            try await database.raw("SELECT id, name, create_time FROM projects ORDER BY id").all().map(Self.project)
        }
    }

    /// The project with this id.
    package func project(id: String) async throws -> Project? {
        try await engine.withSession { database in
            try await database.raw("SELECT id, name, create_time FROM projects WHERE id = \(bind: id)").first().map(
                Self.project
            )
        }
    }

    /// Creates an environment in a project.
    /// - Throws: ``StorageError/projectNotFound(_:)``, ``StorageError/environmentExists(project:environment:)``.
    @discardableResult
    package func createEnvironment(
        projectId: String,
        id: String,
        name: String,
        actor: Actor
    ) async throws -> Environment {
        guard try await project(id: projectId) != nil else { throw StorageError.projectNotFound(projectId) }
        let environment = Environment(
            projectId: projectId,
            id: id,
            name: name,
            createTime: Clock.nowMilliseconds(),
            templateVersion: 0
        )
        do {
            try await engine.transaction { database in
                try await database.raw(
                    """
                    INSERT INTO environments (project_id, id, name, create_time) \
                    VALUES (\(bind: projectId), \(bind: id), \(bind: name), \(bind: environment.createTime))
                    """
                ).run()
                try await Self.insertAudit(
                    database,
                    actor: actor,
                    action: .environmentCreate,
                    projectId: projectId,
                    environmentId: id,
                    summary: "created environment \(projectId)/\(id)",
                    details: ["name": .string(name)]
                )
            }
        } catch  where StoreErrors.isUniqueViolation(error) {
            throw StorageError.environmentExists(project: projectId, environment: id)
        }
        return environment
    }

    /// Throws unless the environment exists, saying whether its project does.
    /// - Throws: ``StorageError/projectNotFound(_:)``, ``StorageError/environmentNotFound(project:environment:)``.
    package func requireEnvironment(_ key: EnvironmentKey) async throws {
        guard try await environment(projectId: key.projectId, id: key.environmentId) == nil else { return }
        if try await project(id: key.projectId) == nil { throw StorageError.projectNotFound(key.projectId) }
        throw StorageError.environmentNotFound(project: key.projectId, environment: key.environmentId)
    }

    /// The environment's live template and its version (0 and an empty template before the first
    /// publish), the environment checked to exist.
    /// - Throws: ``StorageError`` when the project or environment does not exist.
    package func liveTemplate(
        _ environment: EnvironmentKey
    ) async throws -> (template: ConfigTemplate, version: Int64) {
        try await requireEnvironment(environment)
        let latest = try await latestVersion(projectId: environment.projectId, environmentId: environment.environmentId)
        return (latest?.template ?? ConfigTemplate(), latest?.number ?? 0)
    }

    /// A project's environments, by id, with their current template versions.
    package func environments(projectId: String) async throws -> [Environment] {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT e.project_id, e.id, e.name, e.create_time, e.colour, \
                COALESCE((SELECT MAX(v.version_number) FROM template_versions v \
                WHERE v.project_id = e.project_id AND v.environment_id = e.id), 0) AS template_version \
                FROM environments e WHERE e.project_id = \(bind: projectId) ORDER BY e.id
                """
            ).all().map(Self.environment)
        }
    }

    /// Sets or clears (nil) the colour people tell the environment apart by.
    /// - Throws: ``StorageError/environmentNotFound(project:environment:)``,
    ///   ``StorageError/projectNotFound(_:)``.
    package func setEnvironmentColour(
        _ key: EnvironmentKey,
        to colour: EnvironmentColour?,
        actor: Actor
    ) async throws -> Environment {
        let kind = engine.kind
        try await engine.transaction { database in
            try await Self.lockEnvironment(database, key, kind: kind)
            try await database.raw(
                """
                UPDATE environments SET colour = \(bind: colour?.rawValue) \
                WHERE project_id = \(bind: key.projectId) AND id = \(bind: key.environmentId)
                """
            ).run()
            try await Self.insertAudit(
                database,
                actor: actor,
                action: .environmentUpdate,
                projectId: key.projectId,
                environmentId: key.environmentId,
                summary: colour.map { "set the colour of \(key.projectId)/\(key.environmentId) to \($0.rawValue)" }
                    ?? "cleared the colour of \(key.projectId)/\(key.environmentId)",
                details: ["colour": colour.map { .string($0.rawValue) } ?? .null]
            )
        }
        guard let environment = try await environment(projectId: key.projectId, id: key.environmentId) else {
            throw StorageError.environmentNotFound(project: key.projectId, environment: key.environmentId)
        }
        return environment
    }

    /// One environment: one row by its primary key.
    package func environment(projectId: String, id: String) async throws -> Environment? {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT e.project_id, e.id, e.name, e.create_time, e.colour, \
                COALESCE((SELECT MAX(v.version_number) FROM template_versions v \
                WHERE v.project_id = e.project_id AND v.environment_id = e.id), 0) AS template_version \
                FROM environments e WHERE e.project_id = \(bind: projectId) AND e.id = \(bind: id)
                """
            ).first().map(Self.environment)
        }
    }
}
