// Public: the retroactive ExpressibleByArgument conformance below is visible outside this file.
public import ArgumentParser
import Foundation
import VaneCodegen

/// `vane generate`: the typed Swift API for a flags file.
struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Write typed Swift for a flags file: keys, a property per flag, experiment enums, defaults, catalog.",
        discussion: """
            The input is a vane-flags.json ({"flags": [{"key", "type", "default", …}]}), a hand-written \
            list [{"name", "description", "value"}] or a Vane or Firebase template. The build plugin \
            VaneFlagsPlugin runs the same generator on every build. See docs/CODEGEN.md.
            """
    )

    @Option(name: .long, help: "The flags file.")
    var input: String

    @Option(name: .long, help: "The Swift file to write.")
    var output: String

    @Option(name: .long, help: "public or internal (default internal).")
    var accessLevel: SwiftGenerator.AccessLevel = .internal

    @Option(name: .long, help: "The name of the generated type (default Flags).")
    var typeName = "Flags"

    func run() async throws {
        do {
            try GenerateFile.run(
                input: URL(fileURLWithPath: input),
                output: URL(fileURLWithPath: output),
                accessLevel: accessLevel,
                typeName: typeName
            )
        } catch {
            throw InputError(error.description)
        }
        print("Wrote \(output)")
    }
}

extension SwiftGenerator.AccessLevel: @retroactive ExpressibleByArgument {}
