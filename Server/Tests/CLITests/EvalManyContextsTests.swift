import Foundation
import TestSupport
import Testing
import VaneAuthoring
import VaneCore

/// `vane eval` with an array of contexts evaluates them in slices across cores and writes each
/// result from fragments encoded once per branch. Whatever it does, each element must be what
/// VaneCore gives that context alone, laid out as `JSONValue.serialized(.pretty)` lays it out
/// (what `vane eval` printed before), also for keys and values that need escaping.
@Suite(.timeLimit(.minutes(5))) struct EvalManyContextsTests {
    /// Keys and values with quotes, backslashes, control characters and non-ASCII text.
    static let template: JSONValue = [
        "conditions": [
            ["name": "germany", "expression": "device.country in ['de']"],
            ["name": "half", "expression": "percent('escapes') <= 50"],
            ["name": "pro", "expression": "app.customSignal['plan'].exactlyMatches(['pro'])"],
        ],
        "parameters": [
            "quote\"key": [
                "defaultValue": ["value": "say \"hi\""],
                "conditionalValues": ["germany": ["value": "back\\slash \\\" and C:\\path\\"]],
            ],
            "back\\slash": [
                "defaultValue": ["value": "nul \u{00} bell \u{07} esc \u{1B} unit \u{1F} del \u{7F}"],
                "conditionalValues": ["half": ["value": "tab \t newline \n return \r feed \u{0C} backspace \u{08}"]],
            ],
            "tab\tnew\nline\u{01}": ["defaultValue": ["value": "Grüße – 日本語 😊 \u{2028} \u{FEFF} é"]],
            "ünïcødé 😊": [
                "defaultValue": ["value": #"{"json": "with \"quotes\"", "n": [1, 2]}"#],
                "conditionalValues": ["pro": ["value": "</script><!--"], "half": ["value": ""]],
            ],
            "in_app": [
                "defaultValue": ["useInAppDefault": true],
                "conditionalValues": ["germany": ["value": "only in Germany"]],
            ],
            "managed": [
                "defaultValue": ["value": "plain"],
                "conditionalValues": ["pro": ["rolloutValue": ["rolloutId": "r", "value": "v", "percent": 5]]],
            ],
            "no_default": ["conditionalValues": ["half": ["value": "half of them"]]],
        ],
    ]

    /// In-app defaults: one the template leaves to the app, one it lacks, one it overrides.
    static let defaults: JSONValue = [
        "in_app": "local \"default\" \\ \u{02}",
        "only\\local\u{1F}": "ünïcødé default",
        "back\\slash": "never shown: the template has a value",
    ]

    /// 600 contexts: enough for `vane eval` to split them across cores.
    static let contexts: [JSONValue] = (0..<600).map { index in
        var object: JSONObject = ["randomizationId": .string("user-\(index)-\"ü\"")]
        if index % 3 != 2 { object["device.country"] = index % 3 == 0 ? "DE" : "us" }
        if index % 4 == 1 { object["plan"] = "pro" }
        if index % 7 == 3 { object["note"] = "ignored \"attribute\" \\ \u{03}" }
        return .object(object)
    }

    @Test(arguments: [false, true]) func eachElementIsWhatTheContextGivesAlone(explain: Bool) async throws {
        let template = try CLIRunner.temporaryFile(Self.template.serialized(), name: "template.json")
        let defaults = try CLIRunner.temporaryFile(Self.defaults.serialized(), name: "defaults.json")
        let contexts = try CLIRunner.temporaryFile(JSONValue.array(Self.contexts).serialized(), name: "contexts.json")
        let flags = explain ? ["--explain"] : []
        let output = try await CLIRunner.run(
            ["eval", "--template", template, "--context", contexts, "--defaults", defaults] + flags
        )
        #expect(output.status == 0, "\(output.stderr)")

        let compiled = try CompiledTemplate(ConfigTemplate(json: Self.template))
        let inAppDefaults = try InAppDefaults(json: Self.defaults)
        let expected = try Self.contexts.map { context in
            Self.render(
                compiled.evaluate(try EvaluationContext(json: context)),
                defaults: inAppDefaults,
                explain: explain
            )
        }
        let elements = try #require(try JSONValue.parse(output.stdout).arrayValue)
        #expect(elements.count == expected.count)
        for (index, (element, wanted)) in zip(elements, expected).enumerated() where element != wanted {
            Issue.record("context \(index): \(element.serialized()) instead of \(wanted.serialized())")
            break
        }
        // Byte for byte what printing the whole array as one JSONValue gave.
        #expect(output.stdout == JSONValue.array(expected).serialized(.pretty))

        // One context alone prints the object itself, as before.
        for index in [0, 1, 5] {
            let single = try await CLIRunner.run(
                ["eval", "--template", template, "--context", "-", "--defaults", defaults] + flags,
                stdin: Self.contexts[index].serialized()
            )
            #expect(single.status == 0, "\(single.stderr)")
            #expect(single.stdout == expected[index].serialized(.pretty))
        }
    }

    @Test func emptyArrayAndResultsWithoutKeys() async throws {
        let template = try CLIRunner.temporaryFile(
            #"{"parameters": {"a": {"defaultValue": {"useInAppDefault": true}}}}"#
        )
        let empty = try await CLIRunner.run(["eval", "--template", template, "--context", "-"], stdin: "[]")
        #expect(empty.status == 0, "\(empty.stderr)")
        #expect(empty.stdout == "[]\n")
        let noKeys = try await CLIRunner.run(["eval", "--template", template, "--context", "-"], stdin: "[{}, {}]")
        #expect(noKeys.stdout == "[\n  {},\n  {}\n]\n")
    }

    @Test func theFirstInvalidContextIsReported() async throws {
        var contexts = Self.contexts
        contexts[400] = ["nested": ["a": 1]]
        contexts[550] = ["randomizationId": 7]
        let output = try await CLIRunner.run(
            ["eval", "--template", CLIRunner.example("demo.json"), "--context", "-"],
            stdin: JSONValue.array(contexts).serialized()
        )
        #expect(output.status == 1)
        #expect(output.stdout.isEmpty)
        #expect(output.stderr.contains("[400].nested"), "\(output.stderr)")
        #expect(!output.stderr.contains("[550]"), "\(output.stderr)")
    }

    /// What `vane eval` printed for one result before it wrote bytes directly: remote values over
    /// in-app defaults in a `JSONObject`, or with `--explain` each key's explanation.
    static func render(_ result: EvaluationResult, defaults: InAppDefaults, explain: Bool) -> JSONValue {
        var object = JSONObject()
        for resolution in result.resolutions {
            let inAppDefault = defaults[resolution.key]
            guard explain else {
                if let value = resolution.value ?? inAppDefault { object[resolution.key] = .string(value.stringValue) }
                continue
            }
            object[resolution.key] = .object(explanation(resolution, inAppDefault: inAppDefault))
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
