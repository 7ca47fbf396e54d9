public import Foundation
import VaneCore

/// Reads a flags file and writes its Swift API: the one implementation behind `vane generate` and
/// the build plugin's `vane-generate` tool.
public enum GenerateFile {
    /// Why generation failed: the file, and every problem with its JSON path and flag.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The flags file.
        public var input: String
        /// The problems.
        public var message: String

        /// One line per problem, each starting with the file name.
        public var description: String {
            message.split(separator: "\n").map { "\(input): \($0)" }.joined(separator: "\n")
        }
    }

    /// Generates `output` from `input`. The output file is only rewritten when its contents change,
    /// so an unchanged flags file does not make the build recompile the module.
    public static func run(
        input: URL,
        output: URL,
        accessLevel: SwiftGenerator.AccessLevel,
        typeName: String
    ) throws(Failure) {
        let data: Data
        do {
            data = try Data(contentsOf: input)
        } catch {
            throw Failure(input: input.path, message: "cannot read the file: \(error.localizedDescription)")
        }
        let source: String
        do {
            let file = try FlagsFile(data: Array(data))
            source = try SwiftGenerator(
                accessLevel: accessLevel,
                typeName: typeName,
                sourceName: input.lastPathComponent
            )
            .generate(file)
        } catch {
            throw Failure(input: input.path, message: error.description)
        }
        if let existing = try? String(contentsOf: output, encoding: .utf8), existing == source { return }
        do {
            try FileManager.default.createDirectory(
                at: output.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try Data(source.utf8).write(to: output, options: .atomic)
        } catch {
            throw Failure(input: input.path, message: "cannot write \(output.path): \(error.localizedDescription)")
        }
    }
}
