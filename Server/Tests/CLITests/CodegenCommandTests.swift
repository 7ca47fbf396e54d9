import Foundation
import TestSupport
import Testing
import VaneCore

/// `vane generate` and `vane flags check` as real processes; generated code is compiled with
/// `swiftc -typecheck -swift-version 6 -warnings-as-errors` against the Vane module just built.
@Suite(.timeLimit(.minutes(5))) struct CodegenCommandTests {
    /// The build folder the tests run from (it holds `Modules/` and the C module maps).
    static let buildDirectory = CLIRunner.executable.resolvingSymlinksInPath().deletingLastPathComponent()

    /// Type-checks a generated file (plus `extra` source) in Swift 6 mode, warnings as errors.
    func typecheck(_ generated: String, extra: String = "") throws -> CLIRunner.Output {
        let directory = URL(fileURLWithPath: try CLIRunner.temporaryFile(extra, name: "Extra.swift"))
            .deletingLastPathComponent()
        let modules = Self.buildDirectory.appendingPathComponent("Modules").path
        let maps = try FileManager.default.contentsOfDirectory(atPath: Self.buildDirectory.path)
            // A module the plugin's tool also uses is built twice, the second time as `NAME-tool.build`
            // (VaneCore's C target, `CVaneSHA256`): one map per module, or clang sees it defined twice.
            .filter { $0.hasSuffix(".build") && !$0.hasSuffix("-tool.build") }
            .map { Self.buildDirectory.appendingPathComponent($0).appendingPathComponent("module.modulemap").path }
            .filter { FileManager.default.fileExists(atPath: $0) }
        // A C target with a written map (`include/module.modulemap`, as CVaneSHA256 has) gets none in
        // the build folder: swiftc finds it through the target's include folder.
        let sources = CLIRunner.repositoryRoot.appendingPathComponent("Sources")
        let includes = try FileManager.default.contentsOfDirectory(atPath: sources.path)
            .map { sources.appendingPathComponent($0).appendingPathComponent("include") }
            .filter {
                FileManager.default.fileExists(atPath: $0.appendingPathComponent("module.modulemap").path)
            }
            .flatMap { ["-I", $0.path] }
        return try CLIRunner.runBlocking(
            ["swiftc", "-typecheck", "-swift-version", "6", "-warnings-as-errors", "-I", modules]
                + includes + maps.flatMap { ["-Xcc", "-fmodule-map-file=\($0)"] }
                + [generated, directory.appendingPathComponent("Extra.swift").path],
            executable: URL(fileURLWithPath: "/usr/bin/env"),
            timeout: 240
        )
    }

    static let formats: [(name: String, contents: String, use: String)] = [
        (
            "vane-flags.json",
            #"{"flags": [{"key": "new_checkout", "type": "bool", "default": true}, {"key": "test", "type": "experiment", "variants": ["a", "b-c"]}, {"key": "layout", "type": "json", "default": {}, "swiftType": "Layout"}]}"#,
            "struct Layout: Codable, Sendable {}\nfunc use(_ f: Flags) -> (Bool, TestVariant, Layout?) { (f.newCheckout, f.test, f.layout) }"
        ),
        (
            "defaults-list.json",
            #"[{"name": "welcome_text", "description": "The \"hello\".", "value": "Hi"}, {"name": "max", "value": 3}, {"name": "ratio", "value": 0.5}, {"name": "on", "value": false}]"#,
            "func use(_ f: Flags) -> (String, Int, Double, Bool) { (f.welcomeText, f.max, f.ratio, f.on) }"
        ),
    ]

    @Test func generatedCodeForEveryInputFormatCompilesWithoutWarnings() async throws {
        var inputs = Self.formats.map {
            (name: $0.name, path: try? CLIRunner.temporaryFile($0.contents, name: $0.name), use: $0.use)
        }
        inputs.append(
            (
                name: "demo.json", path: CLIRunner.example("demo.json"),
                use: "func use(_ f: Flags) -> Bool { f.paymentsEnabled }"
            )
        )
        let firebase = CLIRunner.repositoryRoot.appendingPathComponent(
            "Tests/VaneCoreTests/Fixtures/server-template.json"
        )
        .path
        inputs.append((name: "server-template.json", path: firebase, use: ""))
        for input in inputs {
            let path = try #require(input.path)
            let output = FileManager.default.temporaryDirectory
                .appendingPathComponent("vane-gen-\(UUID().uuidString)/Flags.swift").path
            let generated = try await CLIRunner.run(["generate", "--input", path, "--output", output])
            #expect(generated.status == 0, "\(input.name): \(generated.stderr)")
            #expect(generated.stdout == "Wrote \(output)\n")
            let compiled = try typecheck(output, extra: "import Vane\n" + input.use)
            #expect(compiled.status == 0, "\(input.name): \(compiled.stderr)")
        }
    }

    @Test func publicAccessAndATypeNameForALibrary() async throws {
        let input = try CLIRunner.temporaryFile(Self.formats[0].contents, name: "vane-flags.json")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vane-gen-\(UUID().uuidString).swift"
        ).path
        let result = try await CLIRunner.run([
            "generate", "--input", input, "--output", output, "--access-level", "public", "--type-name", "ShopFlags",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let source = try String(contentsOfFile: output, encoding: .utf8)
        #expect(source.contains("public struct ShopFlags: Sendable"))
        #expect(
            try await CLIRunner.run(["generate", "--input", input, "--output", output, "--access-level", "open"]).status
                == 2
        )
    }

    @Test func badFlagsFilesFailWithTheFlagNamedAndWriteNothing() async throws {
        let input = try CLIRunner.temporaryFile(
            #"{"flags": [{"key": "a", "type": "bool", "default": 1}, {"key": "a", "type": "bool", "default": true}, {"key": "!!", "type": "int", "default": 1}]}"#,
            name: "vane-flags.json"
        )
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vane-gen-\(UUID().uuidString).swift"
        ).path
        let result = try await CLIRunner.run(["generate", "--input", input, "--output", output])
        #expect(result.status == 1)
        #expect(result.stderr.contains(#"\#(input): error: flags[0].default: flag "a" is a bool"#), "\(result.stderr)")
        #expect(result.stderr.contains(#"flag "a" is defined twice"#))
        #expect(!FileManager.default.fileExists(atPath: output))

        let unnamable = try CLIRunner.temporaryFile(#"{"flags": [{"key": "!!", "type": "int", "default": 1}]}"#)
        let second = try await CLIRunner.run(["generate", "--input", unnamable, "--output", output])
        #expect(second.status == 1)
        #expect(second.stderr.contains(#"flag "!!": the key has no letter or digit"#), "\(second.stderr)")
        #expect(try await CLIRunner.run(["generate", "--input", "/nonexistent.json", "--output", output]).status == 1)
    }

    @Test func flagsCheckFindsStaleUndefinedAndServerDifferences() async throws {
        let flags = try CLIRunner.temporaryFile(
            #"{"flags": [{"key": "payments_enabled", "type": "bool", "default": true}, {"key": "banner_text", "type": "int", "default": 1}, {"key": "old_promo", "type": "bool", "default": false}, {"key": "local_only", "type": "string", "default": ""}]}"#,
            name: "vane-flags.json"
        )
        let sources = URL(fileURLWithPath: flags).deletingLastPathComponent().appendingPathComponent("Sources")
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        try Data(
            "if flags.paymentsEnabled { }\nlet b = flags.bannerText\nlet l = flags.localOnly\nlet x = client.bool(forKey: \"promo_2024\", default: false)\n"
                .utf8
        ).write(to: sources.appendingPathComponent("App.swift"))

        let local = try await CLIRunner.run(["flags", "check", "--flags", flags, "--sources", sources.path])
        #expect(local.status == 1)
        #expect(
            local.stdout.contains(#"stale: "old_promo" is defined in \#(flags) but never referenced"#),
            "\(local.stdout)"
        )
        #expect(
            local.stdout.contains(#"undefined: \#(sources.path)/App.swift:4: reads "promo_2024""#),
            "\(local.stdout)"
        )

        let server = try await ServeProcess.start()
        defer { server.stop() }
        let remote = try await CLIRunner.run(
            ["flags", "check", "--flags", flags, "--sources", sources.path, "--server", server.url],
            environment: ["VANE_KEY": server.adminKey]
        )
        #expect(remote.status == 1)
        #expect(remote.stdout.contains(#"missing on the server: "local_only""#), "\(remote.stdout)")
        #expect(remote.stdout.contains(#"type differs: "banner_text" is int in \#(flags), STRING on the server"#))
        #expect(!remote.stdout.contains("payments_enabled"))

        let template = CLIRunner.example("demo.json")
        let clean = try CLIRunner.temporaryFile(
            #"{"flags": [{"key": "payments_enabled", "type": "bool", "default": true}]}"#,
            name: "vane-flags.json"
        )
        let cleanSources = URL(fileURLWithPath: clean).deletingLastPathComponent().appendingPathComponent("Sources")
        try FileManager.default.createDirectory(at: cleanSources, withIntermediateDirectories: true)
        try Data("if flags.paymentsEnabled { }\n".utf8).write(to: cleanSources.appendingPathComponent("App.swift"))
        let ok = try await CLIRunner.run([
            "flags", "check", "--flags", clean, "--sources", cleanSources.path, "--template", template,
        ])
        #expect(ok.status == 0, "\(ok.stdout)\(ok.stderr)")
        #expect(ok.stdout == "OK: every flag is referenced, defined and on the server\n")

        #expect(try await CLIRunner.run(["flags", "check", "--flags", clean, "--sources", "/nonexistent"]).status == 1)
        let both = try await CLIRunner.run(
            [
                "flags", "check", "--flags", clean, "--sources", sources.path, "--template", template, "--server",
                server.url,
            ]
        )
        #expect(both.status == 2)
    }
}
