import ArgumentParser
import Foundation
import VaneAuthoring
import VaneCore

/// `vane publish`: validate a template locally, then publish it as a new version.
struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Validate a template and publish it to a running server as a new version.",
        discussion: """
            The template is checked first; with errors, every problem is printed and nothing is sent. \
            Then vane reads the current version's ETag and publishes with If-Match, so a version someone \
            published in between is never overwritten by accident (--force overwrites it; \
            --if-version N guards the whole get-edit-publish cycle).
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The template file (Vane or Firebase JSON), or - for standard input.")
    var file: String

    @Flag(name: .long, help: "Publish whatever is current now (If-Match: *).")
    var force = false

    @Option(name: .long, help: "Why: the new version's description.")
    var message: String?

    @Option(
        name: .customLong("if-version"),
        help: "Publish only if version N is still the current one (the version you downloaded)."
    )
    var ifVersion: Int64?

    func validate() throws {
        if force, ifVersion != nil { throw ValidationError("--force and --if-version contradict each other; use one") }
        if let ifVersion, ifVersion < 0 { throw ValidationError("--if-version must not be negative") }
    }

    func run() async throws {
        let name = InputFiles.displayName(file)
        let template = TemplatePublisher.prepared(try InputFiles.template(file), message: message)
        try TemplatePublisher.checkLocally(template, file: name)
        for warning in template.validate() where warning.severity == .warning {
            StandardError.write("\(name): \(warning)")
        }
        let publisher = TemplatePublisher(options: remote, force: force, expectedVersion: ifVersion)
        let outcome = try await publisher.publish(template)
        if remote.json {
            RemoteOutput.printJSON(outcome.reply)
            return
        }
        print(Self.summary(outcome, scope: remote.scope))
    }

    /// `Published version 3 of demo/production (INCREMENTAL_UPDATE; previous version 2).`
    static func summary(_ outcome: TemplatePublisher.Outcome, scope: String) -> String {
        let type = outcome.template.version?.updateType?.rawValue ?? "published"
        let previous = outcome.previous.map { "; previous version \($0)" } ?? ""
        return "Published version \(outcome.version) of \(scope) (\(type)\(previous))."
    }
}
