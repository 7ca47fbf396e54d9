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
        let output: JSONValue
        if case .array(let elements) = contextJSON {
            var results: [JSONValue] = []
            for (index, element) in elements.enumerated() {
                let context = try Self.context(element, at: JSONPath.root.appending(index), file: self.context)
                results.append(render(compiled.evaluate(context), defaults: inAppDefaults))
            }
            output = .array(results)
        } else {
            output = render(
                compiled.evaluate(try Self.context(contextJSON, at: .root, file: context)),
                defaults: inAppDefaults
            )
        }
        print(output.serialized(.pretty), terminator: "")
    }

    static func context(_ json: JSONValue, at path: JSONPath, file: String) throws(InputError) -> EvaluationContext {
        do {
            return try EvaluationContext(json: json, at: path)
        } catch {
            throw InputError(file: InputFiles.displayName(file), issues: error.issues)
        }
    }

    /// Remote values over in-app defaults, as an app would see them.
    func render(_ result: EvaluationResult, defaults: InAppDefaults) -> JSONValue {
        var object = JSONObject()
        for resolution in result.resolutions {
            let inAppDefault = defaults[resolution.key]
            guard explain else {
                if let value = resolution.value ?? inAppDefault { object[resolution.key] = .string(value.stringValue) }
                continue
            }
            object[resolution.key] = .object(Self.explanation(resolution, inAppDefault: inAppDefault))
        }
        for entry in defaults.entries where !result.template.containsKey(entry.key) {
            object[entry.key] =
                explain
                ? .object([
                    "value": .string(entry.value.stringValue), "source": "inAppDefault", "reason": "notInTemplate",
                ])
                : .string(entry.value.stringValue)
        }
        return .object(object)
    }

    static func explanation(_ resolution: ParameterResolution, inAppDefault: CoercedValue?) -> JSONObject {
        var object = JSONObject()
        let reason: String
        switch resolution.outcome {
        case .value: reason = resolution.matchedCondition == nil ? "defaultValue" : "conditionalValue"
        case .useInAppDefault: reason = "useInAppDefault"
        case .managed: reason = "managedValue"
        case .noDefaultValue: reason = "noDefaultValue"
        }
        if let value = resolution.value {
            object["value"] = .string(value.stringValue)
            object["source"] = "remote"
        } else if let inAppDefault {
            object["value"] = .string(inAppDefault.stringValue)
            object["source"] = "inAppDefault"
        } else {
            object["value"] = .null
            object["source"] = "none"
        }
        object["reason"] = .string(reason)
        if let condition = resolution.matchedCondition { object["condition"] = .string(condition) }
        if case .managed(let kind) = resolution.outcome { object["managed"] = .string(kind) }
        return object
    }
}
