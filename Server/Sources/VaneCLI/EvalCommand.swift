import ArgumentParser
import Foundation
import VaneCore

/// `vane eval`: what a template gives one user, or many.
struct EvalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Evaluate a template for a context and print the values a client would receive.",
        discussion: """
            The context file is a JSON object with "randomizationId" (or "targetingKey") and attributes \
            such as "app.version", "device.country" or custom signals; or an array of such objects, \
            which prints an array of results. Use - to read a file from standard input.
            """
    )

    @Option(name: .long, help: "The template: a Firebase client or server template, or a Vane template.")
    var template: String

    @Option(name: .long, help: "The context: a JSON object, or an array of objects.")
    var context: String

    @Option(
        name: .long,
        help: "In-app defaults (a flat JSON object, or [{\"name\", \"value\"}]) for keys the template leaves out."
    )
    var defaults: String?

    @Flag(name: .long, help: "Show each key's source and the condition that decided it.")
    var explain = false

    func validate() throws {
        let stdinUses = [template, context, defaults].filter { $0 == "-" }.count
        if stdinUses > 1 {
            throw ValidationError("only one of --template, --context and --defaults can read standard input (-)")
        }
    }

    func run() async throws {
        let template = try InputFiles.template(template)
        let compiled: CompiledTemplate
        do {
            compiled = try CompiledTemplate(template)
        } catch {
            throw InputError(file: InputFiles.displayName(self.template), issues: error.issues)
        }
        var inAppDefaults = InAppDefaults()
        if let defaults {
            let bytes = try InputFiles.read(defaults)
            do {
                inAppDefaults = try InAppDefaults(data: bytes)
            } catch {
                throw InputError(file: InputFiles.displayName(defaults), issues: error.issues)
            }
        }
        let contextJSON = try InputFiles.json(context)
        // One instant for every context, so a dateTime rule treats them all alike.
        let now = Date()
        // The output goes out a megabyte at a time, from a buffer that stays that size.
        let flushSize = 1 << 20
        var writer = JSONWriter(formatting: .pretty, reservingCapacity: flushSize + (1 << 16))
        if case .array(let elements) = contextJSON {
            // Every context is read before anything is printed: an invalid one prints nothing.
            var contexts: [EvaluationContext] = []
            contexts.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                contexts.append(try Self.context(element, at: JSONPath.root.appending(index), file: context))
            }
            let output = EvalOutput(compiled: compiled, defaults: inAppDefaults, explain: explain, depth: 1)
            writer.beginArray()
            try await Self.evaluate(contexts, compiled: compiled, output: output, at: now) { batch in
                try batch.forEachResult { result in
                    writer.encoded(result)
                    if writer.bytes.count >= flushSize { try writer.flush(StandardOutput.write) }
                }
            }
            writer.endArray()
        } else {
            let output = EvalOutput(compiled: compiled, defaults: inAppDefaults, explain: explain, depth: 0)
            let context = try Self.context(contextJSON, at: .root, file: context)
            output.write(compiled.evaluate(context, at: now), to: &writer)
        }
        writer.newline()
        try writer.flush(StandardOutput.write)
    }

    /// The encoded results of consecutive contexts, end to end: elements of the output array.
    struct EvaluatedBatch: Sendable {
        var bytes: [UInt8]
        /// Where each result ends in ``bytes``.
        var ends: [Int]

        func forEachResult(_ body: (UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
            try bytes.withUnsafeBufferPointer { bytes in
                var start = 0
                for end in ends {
                    try body(UnsafeBufferPointer(rebasing: bytes[start..<end]))
                    start = end
                }
            }
        }
    }

    /// How many contexts one task evaluates at a time.
    static let batchSize = 64

    /// Evaluates contexts in batches on every core and hands the batches to `write` in order,
    /// while later ones are evaluated. At most a few batches are held at once, so memory does not
    /// grow with the number of contexts.
    static func evaluate(
        _ contexts: [EvaluationContext],
        compiled: CompiledTemplate,
        output: EvalOutput,
        at now: Date,
        write: (EvaluatedBatch) throws -> Void
    ) async throws {
        let batchCount = (contexts.count + batchSize - 1) / batchSize
        // One batch more than cores, so a core that finishes finds the next one waiting.
        let inFlight = ProcessInfo.processInfo.activeProcessorCount + 1
        try await withThrowingTaskGroup(of: (Int, EvaluatedBatch).self) { group in
            var submitted = 0
            var written = 0
            var finished: [Int: EvaluatedBatch] = [:]
            while written < batchCount {
                while submitted < batchCount && submitted - written < inFlight {
                    let batch = submitted
                    let range = batch * batchSize..<min(contexts.count, (batch + 1) * batchSize)
                    group.addTask {
                        (batch, evaluateBatch(contexts[range], compiled: compiled, output: output, at: now))
                    }
                    submitted += 1
                }
                guard let (batch, result) = try await group.next() else { break }
                finished[batch] = result
                while let next = finished.removeValue(forKey: written) {
                    try write(next)
                    written += 1
                }
            }
        }
    }

    private static func evaluateBatch(
        _ contexts: ArraySlice<EvaluationContext>,
        compiled: CompiledTemplate,
        output: EvalOutput,
        at now: Date
    ) -> EvaluatedBatch {
        var writer = JSONWriter(formatting: .pretty, depth: 1)
        var ends: [Int] = []
        ends.reserveCapacity(contexts.count)
        for context in contexts {
            output.write(compiled.evaluate(context, at: now), to: &writer)
            ends.append(writer.bytes.count)
            // Results are about the size of the first: reserve for the rest at once.
            if ends.count == 1 { writer.reserveCapacity(writer.bytes.count * (contexts.count + 1)) }
        }
        return EvaluatedBatch(bytes: writer.bytes, ends: ends)
    }

    static func context(_ json: JSONValue, at path: JSONPath, file: String) throws(InputError) -> EvaluationContext {
        do {
            return try EvaluationContext(json: json, at: path)
        } catch {
            throw InputError(file: InputFiles.displayName(file), issues: error.issues)
        }
    }
}
