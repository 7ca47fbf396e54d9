import ArgumentParser

/// The `vane` command-line tool.
@main
struct VaneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vane",
        abstract: "Self-hosted feature flags, A/B tests and remote config for Swift."
    )
}
