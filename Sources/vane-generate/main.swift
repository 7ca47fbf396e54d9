// The build plugin's tool: `vane generate` without the rest of the CLI, so a target that uses the
// plugin builds only VaneCore and the generator, not the server.
//
// Usage: vane-generate --input FILE --output FILE [--access-level public|internal] [--type-name Flags]
import Foundation
import VaneCodegen

var arguments = Array(CommandLine.arguments.dropFirst())
var options: [String: String] = [:]
while arguments.count >= 2, arguments[0].hasPrefix("--") {
    options[String(arguments.removeFirst().dropFirst(2))] = arguments.removeFirst()
}
let usage = "usage: vane-generate --input FILE --output FILE [--access-level public|internal] [--type-name Flags]\n"
guard arguments.isEmpty, let input = options["input"], let output = options["output"],
    let accessLevel = SwiftGenerator.AccessLevel(rawValue: options["access-level"] ?? "internal"),
    Set(options.keys).isSubset(of: ["input", "output", "access-level", "type-name"])
else {
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
do {
    try GenerateFile.run(
        input: URL(fileURLWithPath: input),
        output: URL(fileURLWithPath: output),
        accessLevel: accessLevel,
        typeName: options["type-name"] ?? "Flags"
    )
} catch {
    // `file: message` lines, which Xcode and SwiftPM show next to the flags file.
    FileHandle.standardError.write(Data((error.description + "\n").utf8))
    exit(1)
}
