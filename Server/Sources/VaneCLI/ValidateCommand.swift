import ArgumentParser
import VaneAuthoring
import VaneCore

/// `vane validate`: every problem in a template, or OK.
struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a template and print every problem with its JSON path, or OK.",
        discussion: "Exits 1 when the template has errors; warnings alone still print OK."
    )

    @Argument(help: "The template file, or - for standard input.")
    var file: String

    @Flag(name: .long, help: "Accept values that look like credentials everywhere.")
    var allowSecrets = false

    func run() async throws {
        let template = try InputFiles.template(file)
        let issues = template.validate(options: ValidationOptions(allowSecrets: allowSecrets)).sorted {
            $0.severity < $1.severity
        }
        let name = InputFiles.displayName(file)
        for issue in issues { print("\(name): \(issue)") }
        if issues.contains(where: { $0.severity == .error }) {
            let errors = issues.filter { $0.severity == .error }.count
            throw InputError("\(name): \(errors) error\(errors == 1 ? "" : "s")")
        }
        print("OK")
    }
}
