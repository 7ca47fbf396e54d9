import Foundation
import TestSupport
import Testing
import VaneCore

@Suite(.timeLimit(.minutes(5))) struct EvalCommandTests {
    @Test func printsExactlyTheKeysAClientReceives() async throws {
        let output = try await CLIRunner.run([
            "eval", "--template", CLIRunner.example("demo.json"), "--context", CLIRunner.example("demo-context.json"),
        ])
        #expect(output.status == 0, "\(output.stderr)")
        let json = try JSONValue.parse(output.stdout)
        #expect(
            json.objectValue?.keys == [
                "payments_enabled", "banner_text", "settings_layout", "checkout_variant", "max_upload_mb",
            ]
        )
        #expect(json.objectValue?["banner_text"] == "Willkommen bei Vane!")
        #expect(json.objectValue?["max_upload_mb"] == "500")
        let expectedVariant =
            PercentBucket.microPercentile(seed: "checkout_test", randomizationId: "installation-7f3a9c") > 50_000_000
            ? "one_page" : "control"
        #expect(json.objectValue?["checkout_variant"] == .string(expectedVariant))
    }

    @Test func explainsSourceAndDecidingCondition() async throws {
        let output = try await CLIRunner.run([
            "eval", "--template", CLIRunner.example("demo.json"), "--context", CLIRunner.example("demo-context.json"),
            "--explain",
        ])
        #expect(output.status == 0, "\(output.stderr)")
        let json = try JSONValue.parse(output.stdout)
        #expect(
            json.objectValue?["banner_text"]
                == [
                    "value": "Willkommen bei Vane!", "source": "remote", "reason": "conditionalValue",
                    "condition": "germany_austria",
                ]
        )
        #expect(
            json.objectValue?["payments_enabled"] == ["value": "true", "source": "remote", "reason": "defaultValue"]
        )
    }

    @Test func evaluatesAnArrayOfContextsFromStandardInput() async throws {
        let contexts = #"[{"randomizationId": "a", "device.country": "AT"}, {"targetingKey": "b", "seats": 12}]"#
        let output = try await CLIRunner.run(
            ["eval", "--template", CLIRunner.example("demo.json"), "--context", "-"],
            stdin: contexts
        )
        #expect(output.status == 0, "\(output.stderr)")
        let results = try #require(try JSONValue.parse(output.stdout).arrayValue)
        #expect(results.count == 2)
        #expect(results[0].objectValue?["banner_text"] == "Willkommen bei Vane!")
        #expect(results[1].objectValue?["banner_text"] == "Welcome to Vane!")
        #expect(results[1].objectValue?["max_upload_mb"] == "500")
    }

    @Test func inAppDefaultsFillWhatTheTemplateLeavesOut() async throws {
        let template = try CLIRunner.temporaryFile(
            #"{"parameters": {"a": {"defaultValue": {"useInAppDefault": true}}, "b": {"defaultValue": {"value": "remote"}}}}"#
        )
        let defaults = try CLIRunner.temporaryFile(#"{"a": "local a", "b": "local b", "c": 3}"#, name: "defaults.json")
        let context = try CLIRunner.temporaryFile("{}", name: "context.json")
        let plain = try await CLIRunner.run([
            "eval", "--template", template, "--context", context, "--defaults", defaults,
        ])
        #expect(try JSONValue.parse(plain.stdout) == ["a": "local a", "b": "remote", "c": "3"])
        let explained = try await CLIRunner.run([
            "eval", "--template", template, "--context", context, "--defaults", defaults, "--explain",
        ])
        let json = try JSONValue.parse(explained.stdout)
        #expect(json.objectValue?["a"] == ["value": "local a", "source": "inAppDefault", "reason": "useInAppDefault"])
        #expect(json.objectValue?["c"] == ["value": "3", "source": "inAppDefault", "reason": "notInTemplate"])
        let without = try await CLIRunner.run(["eval", "--template", template, "--context", context])
        #expect(try JSONValue.parse(without.stdout) == ["b": "remote"])
    }

    @Test func readsFirebaseServerTemplates() async throws {
        let template = try CLIRunner.temporaryFile(
            #"{"conditions": [{"name": "pro", "condition": {"customSignal": {"customSignalOperator": "NUMERIC_GREATER_EQUAL", "customSignalKey": "seats", "targetCustomSignalValues": ["10"]}}}], "parameters": {"limit": {"defaultValue": {"value": "1"}, "conditionalValues": {"pro": {"value": "100"}}}}}"#
        )
        let output = try await CLIRunner.run(
            ["eval", "--template", template, "--context", "-"],
            stdin: #"{"seats": "12"}"#
        )
        #expect(try JSONValue.parse(output.stdout) == ["limit": "100"])
    }

    @Test func invalidInputExitsOneWithAPreciseMessage() async throws {
        let broken = try CLIRunner.temporaryFile(
            #"{"conditions": [{"name": "x", "expression": "device.os == ios"}], "parameters": {}}"#
        )
        let output = try await CLIRunner.run(["eval", "--template", broken, "--context", "-"], stdin: "{}")
        #expect(output.status == 1)
        #expect(output.stdout.isEmpty)
        #expect(output.stderr.contains("conditions[0].expression"))
        #expect(output.stderr.contains("column 14"))

        let truncated = try await CLIRunner.run(
            ["eval", "--template", CLIRunner.example("demo.json"), "--context", "-"],
            stdin: #"{"randomizationId": "#
        )
        #expect(truncated.status == 1)
        #expect(truncated.stderr.contains("<stdin>: line 1"))

        let missing = try await CLIRunner.run(
            ["eval", "--template", "/nonexistent/template.json", "--context", "-"],
            stdin: "{}"
        )
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("/nonexistent/template.json: no such file"))

        let badContext = try await CLIRunner.run(
            ["eval", "--template", CLIRunner.example("demo.json"), "--context", "-"],
            stdin: #"{"nested": {"a": 1}}"#
        )
        #expect(badContext.status == 1)
        #expect(badContext.stderr.contains("<stdin>: error: nested:"))
    }

    @Test func usageErrorsExitTwo() async throws {
        let missingOption = try await CLIRunner.run(["eval", "--template", CLIRunner.example("demo.json")])
        #expect(missingOption.status == 2)
        #expect(missingOption.stderr.contains("--context"))
        let twoStdins = try await CLIRunner.run(["eval", "--template", "-", "--context", "-"])
        #expect(twoStdins.status == 2)
        let unknown = try await CLIRunner.run(["frobnicate"])
        #expect(unknown.status == 2)
        let help = try await CLIRunner.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("eval"))
    }
}

@Suite(.timeLimit(.minutes(5))) struct ValidateCommandTests {
    @Test func printsOKForAValidTemplate() async throws {
        let output = try await CLIRunner.run(["validate", CLIRunner.example("demo.json")])
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        #expect(output.stdout == "OK\n")
    }

    @Test func printsEveryProblemAndExitsOne() async throws {
        let file = try CLIRunner.temporaryFile(
            #"{"conditions": [{"name": "c", "expression": "percent <= 200"}], "parameters": {"flag": {"defaultValue": {"value": "yes"}, "valueType": "BOOLEAN"}, "bad key": {"defaultValue": {"value": "x"}}, "db": {"defaultValue": {"value": "postgres://u:secretpw@host/db"}}}}"#
        )
        let output = try await CLIRunner.run(["validate", file])
        #expect(output.status == 1)
        let lines = output.stdout.split(separator: "\n")
        #expect(lines.count == 5, "\(output.stdout)")
        #expect(output.stdout.contains("conditions[0].expression"))
        // Warnings print too: no parameter uses the condition "c".
        #expect(output.stdout.contains(#"conditions[0].name: no parameter has a value for the condition "c""#))
        #expect(output.stdout.contains("parameters.flag.defaultValue.value"))
        #expect(output.stdout.contains(#"parameters["bad key"]"#))
        #expect(output.stdout.contains("parameters.db.defaultValue.value"))
        #expect(!output.stdout.contains("secretpw"))
        #expect(output.stderr.contains("4 errors"))
    }

    @Test func allowSecretsFlag() async throws {
        let file = try CLIRunner.temporaryFile(
            #"{"parameters": {"db": {"defaultValue": {"value": "postgres://u:secretpw@host/db"}}}}"#
        )
        #expect(try await CLIRunner.run(["validate", file]).status == 1)
        #expect(try await CLIRunner.run(["validate", "--allow-secrets", file]).status == 0)
    }
}

@Suite(.timeLimit(.minutes(5))) struct PercentileCommandTests {
    @Test(arguments: [("1", "one", "64146488"), ("", "😊", "9911325"), ("hêl£o", "wørlÐ", "67411682")])
    func printsTheMicroPercentile(seed: String, id: String, expected: String) async throws {
        let output = try await CLIRunner.run(["percentile", "--seed", seed, "--id", id])
        #expect(output.status == 0)
        #expect(output.stdout == expected + "\n")
    }

    @Test func seedIsOptional() async throws {
        let output = try await CLIRunner.run(["percentile", "--id", "😀"])
        #expect(output.stdout == "62040281\n")
    }

    @Test func requiresAnId() async throws {
        #expect(try await CLIRunner.run(["percentile", "--seed", "x"]).status == 2)
        #expect(try await CLIRunner.run(["percentile", "--id", ""]).status == 2)
    }
}
