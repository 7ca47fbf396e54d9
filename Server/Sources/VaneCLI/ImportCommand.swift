import ArgumentParser
import Foundation
import VaneAuthoring
import VaneCore

/// `vane import`: bring templates from other systems.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Publish a template exported from another system.",
        subcommands: [ImportFirebaseCommand.self]
    )
}

/// `vane import firebase`: publish a Firebase Remote Config template and say what Vane cannot evaluate.
struct ImportFirebaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "firebase",
        abstract:
            "Publish a Firebase Remote Config template (client or server) and report what Vane keeps and cannot evaluate.",
        discussion: """
            Get the file with `firebase remoteconfig:get -o FILE` or the REST API. Everything is kept as written. \
            Values managed by Firebase services (rolloutValue, experimentValue, personalizationValue) are \
            served as useInAppDefault; server-template conditions Vane does not understand are reported.
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The Firebase template (JSON), or - for standard input.")
    var file: String

    @Flag(name: .long, help: "Publish whatever is current now (If-Match: *).")
    var force = false

    @Option(name: .long, help: "The new version's description (default: Imported from Firebase (FILE)).")
    var message: String?

    func run() async throws {
        let name = InputFiles.displayName(file)
        let defaultMessage = "Imported from Firebase (\(URL(fileURLWithPath: name).lastPathComponent))"
        let template = TemplatePublisher.prepared(try InputFiles.template(file), message: message ?? defaultMessage)
        try TemplatePublisher.checkLocally(template, file: name)
        let report = Self.report(template)
        let outcome = try await TemplatePublisher(options: remote, force: force).publish(template)
        let text = Self.render(report, template: template, file: name, outcome: outcome, scope: remote.scope)
        if remote.json {
            RemoteOutput.printJSON(outcome.reply)
            StandardError.write(text)
        } else {
            print(text)
        }
    }

    /// What an import cannot evaluate, and other warnings.
    struct Report {
        /// Managed values: `parameters.x.defaultValue` → `rolloutValue`.
        var managedValues: [(path: JSONPath, kind: String)] = []
        /// Conditions Vane reads only in part.
        var conditionProblems: [ValidationIssue] = []
        /// Everything else `validate()` warns about.
        var warnings: [ValidationIssue] = []
    }

    static func report(_ template: ConfigTemplate) -> Report {
        var report = Report()
        var parameters = template.parameters.map { (JSONPath.root.appending("parameters").appending($0.key), $0) }
        for group in template.parameterGroups {
            let groupPath = JSONPath.root.appending("parameterGroups").appending(group.name).appending("parameters")
            parameters += group.parameters.map { (groupPath.appending($0.key), $0) }
        }
        for (path, parameter) in parameters {
            if let value = parameter.defaultValue, case .managed(let kind) = value.kind {
                report.managedValues.append((path.appending("defaultValue"), kind))
            }
            for conditional in parameter.conditionalValues {
                if case .managed(let kind) = conditional.value.kind {
                    report.managedValues.append(
                        (path.appending("conditionalValues").appending(conditional.conditionName), kind)
                    )
                }
            }
        }
        for issue in template.validate() where issue.severity == .warning {
            switch issue.rule {
            case "managed-value": continue  // listed with the managed values
            case "condition-structure": report.conditionProblems.append(issue)
            default: report.warnings.append(issue)
            }
        }
        return report
    }

    static func render(
        _ report: Report,
        template: ConfigTemplate,
        file: String,
        outcome: TemplatePublisher.Outcome,
        scope: String
    ) -> String {
        let kind =
            template.isServerTemplate
            ? "server template" : (template.conditions.isEmpty ? "template" : "client template")
        let count = { (number: Int, noun: String) in "\(number) \(noun)\(number == 1 ? "" : "s")" }
        let groups =
            template.parameterGroups.isEmpty ? "" : ", \(count(template.parameterGroups.count, "parameter group"))"
        var lines = [
            "Imported the Firebase \(kind) \(file) into \(scope): " + PublishCommand.summary(outcome, scope: scope),
            "Kept: \(count(template.allParameters.count, "parameter")), \(count(template.conditions.count, "condition"))\(groups).",
        ]
        if report.managedValues.isEmpty && report.conditionProblems.isEmpty {
            lines.append("Vane evaluates everything in it.")
        } else {
            lines.append("Cannot evaluate (kept as written, so exporting gives them back):")
            for (path, kind) in report.managedValues {
                lines.append("  \(path): \(kind) is managed by Firebase; Vane serves it as useInAppDefault")
            }
            for issue in report.conditionProblems { lines.append("  \(issue.path): \(issue.message)") }
        }
        if !report.warnings.isEmpty {
            lines.append("Warnings:")
            for issue in report.warnings { lines.append("  \(issue.path): \(issue.message)") }
        }
        return lines.joined(separator: "\n")
    }
}
