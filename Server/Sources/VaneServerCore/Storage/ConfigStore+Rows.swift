import Foundation
import Logging
package import SQLKit
import VaneCore

// Rows of the store's tables as its models, shared by the extensions that read them.
extension ConfigStore {
    package static func project(_ row: any SQLRow) throws -> Project {
        Project(
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            createTime: try row.decode(column: "create_time", as: Int64.self)
        )
    }

    package static func environment(_ row: any SQLRow) throws -> Environment {
        Environment(
            projectId: try row.decode(column: "project_id", as: String.self),
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            createTime: try row.decode(column: "create_time", as: Int64.self),
            templateVersion: try row.decode(column: "template_version", as: Int64.self),
            // Written only through EnvironmentColour; a name a later version dropped reads as none.
            colour: try row.decode(column: "colour", as: String?.self).flatMap(EnvironmentColour.init(rawValue:))
        )
    }

    package static func storedVersion(_ row: any SQLRow) throws -> StoredVersion {
        let text = try row.decode(column: "template", as: String.self)
        return StoredVersion(
            projectId: try row.decode(column: "project_id", as: String.self),
            environmentId: try row.decode(column: "environment_id", as: String.self),
            number: try row.decode(column: "version_number", as: Int64.self),
            updateTime: try row.decode(column: "update_time", as: Int64.self),
            template: try ConfigTemplate(data: Array(text.utf8)),
            templateJSON: text
        )
    }

    package static func storedKey(_ row: any SQLRow) throws -> StoredKey {
        let roleName = try row.decode(column: "role", as: String.self)
        return StoredKey(
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            role: KeyRole(rawValue: roleName) ?? .client,
            projectId: try row.decode(column: "project_id", as: String?.self),
            environmentId: try row.decode(column: "environment_id", as: String?.self),
            createTime: try row.decode(column: "create_time", as: Int64.self),
            revokeTime: try row.decode(column: "revoke_time", as: Int64?.self)
        )
    }
}
