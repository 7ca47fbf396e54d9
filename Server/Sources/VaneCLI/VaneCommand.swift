import ArgumentParser
import Foundation

/// The `vane` command-line tool.
///
/// Exit codes: 0 success, 1 invalid input (a template, context or defaults file Vane cannot
/// use), 2 usage error (unknown option, missing argument). Errors go to standard error.
@main
struct VaneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vane",
        abstract: "Self-hosted feature flags, A/B tests and remote config for Swift.",
        version: VaneVersion.current,
        subcommands: [
            ServeCommand.self, EvalCommand.self, ExplainCommand.self, ValidateCommand.self, PercentileCommand.self,
            PublishCommand.self, GetCommand.self, VersionsCommand.self, RollbackCommand.self, DiffCommand.self,
            RebaseCommand.self,
            KeysCommand.self, UsersCommand.self, ExperimentsCommand.self, RolloutsCommand.self,
            ChangeRequestsCommand.self,
            WebhooksCommand.self,
            ImportCommand.self, ExportCommand.self, GenerateCommand.self, FlagsCommand.self,
        ]
    )

    /// Runs the command, mapping errors to Vane's exit codes.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as InputError {
            StandardError.write(error.message)
            Foundation.exit(InputError.exitCode)
        } catch let error as ExitCode {
            Foundation.exit(error.rawValue)
        } catch {
            let message = fullMessage(for: error)
            if exitCode(for: error) == .success {
                if !message.isEmpty { print(message) }
                Foundation.exit(0)
            }
            StandardError.write(message)
            Foundation.exit(UsageExit.code)
        }
    }
}

/// The tool's version.
enum VaneVersion {
    static let current = "0.1.0"
}

/// Exit code 2: the command line itself is wrong.
enum UsageExit {
    static let code: Int32 = 2
}
