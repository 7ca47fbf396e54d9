import Foundation
import VaneAuthoring
import VaneCore

/// Publishing a template the safe way: validate locally, read the current ETag, `PUT` with
/// `If-Match`, and explain a conflict. Shared by `vane publish` and `vane import firebase`.
struct TemplatePublisher {
    /// What a publish did.
    struct Outcome {
        /// The server's reply: the stored template with its version metadata.
        var reply: VaneAdminClient.Reply
        /// The stored template.
        var template: ConfigTemplate
        /// The new version number.
        var version: Int64
        /// The version the publish replaced; nil when forced.
        var previous: Int64?
    }

    let options: RemoteOptions
    /// Send `If-Match: *`.
    var force = false
    /// Publish only if this is still the current version.
    var expectedVersion: Int64?

    /// Checks a template and prints its warnings; every error is in the thrown message.
    static func checkLocally(_ template: ConfigTemplate, file: String) throws {
        let issues = template.validate().sorted { $0.severity < $1.severity }
        let errors = issues.filter { $0.severity == .error }
        if !errors.isEmpty {
            let lines = errors.map { "\(file): \($0)" }
            let count = "\(errors.count) error\(errors.count == 1 ? "" : "s")"
            throw InputError(
                (lines + [
                    "\(file): \(count); nothing was published. Fix them (vane validate \(file)) and publish again"
                ])
                .joined(separator: "\n")
            )
        }
    }

    /// The template as it will be sent: the version metadata is the server's to set, so only a
    /// description survives (`--message`, or one a hand-written file sets without a version number).
    static func prepared(_ template: ConfigTemplate, message: String?) -> ConfigTemplate {
        var result = template
        let ownDescription = template.version?.versionNumber == nil ? template.version?.description : nil
        let description = message ?? ownDescription
        result.version = description.map { TemplateVersion(description: $0) }
        return result
    }

    /// Publishes a checked template.
    func publish(_ template: ConfigTemplate) async throws -> Outcome {
        try await options.call { client in
            let project = options.resolvedProject
            let environment = options.resolvedEnvironment
            var ifMatch = "*"
            var previous: Int64?
            if !force {
                let current = try await client.template(
                    project: project,
                    environment: environment,
                    version: expectedVersion
                )
                guard let etag = current.etag else {
                    throw VaneAdminClient.Failure.malformedResponse(
                        server: client.server,
                        reason: "GET …/template sent no ETag"
                    )
                }
                ifMatch = etag
                previous =
                    try expectedVersion ?? RemoteOutput.template(current, server: client.server).version?.number ?? 0
            }
            let reply: VaneAdminClient.Reply
            do {
                reply = try await client.publish(
                    project: project,
                    environment: environment,
                    template: Data(template.serialized(.compact).utf8),
                    ifMatch: ifMatch
                )
            } catch let failure as VaneAdminClient.Failure where failure.status == 412 {
                throw InputError(try await conflictMessage(client, read: previous ?? 0))
            }
            let stored = try RemoteOutput.template(reply, server: client.server)
            return Outcome(reply: reply, template: stored, version: stored.version?.number ?? 0, previous: previous)
        }
    }

    /// Explains a 412: who is ahead, and the two ways on.
    func conflictMessage(_ client: VaneAdminClient, read: Int64) async throws -> String {
        let current = try? await client.template(
            project: options.resolvedProject,
            environment: options.resolvedEnvironment
        )
        let number = current.flatMap { try? RemoteOutput.template($0, server: client.server).version?.number }
        let ahead = number.map { "version \($0)" } ?? "a newer version"
        return """
            someone published \(ahead) of \(options.scope) after you read version \(read); nothing was published.
            To keep their change: vane get --output FILE, reapply your edit, and publish again\
            \(number.map { " (vane diff \(read) \($0) shows what changed)" } ?? "").
            To overwrite it: publish again with --force.
            """
    }
}
