import Foundation
import TestSupport
import Testing
import VaneCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The remote commands against a real `vane serve` process over loopback.
@Suite(.serialized, .timeLimit(.minutes(5))) struct RemoteCommandsTests {
    static let flags = #"{"parameters": {"a": {"defaultValue": {"value": "one"}}}}"#
    static let moreFlags =
        #"{"conditions": [{"name": "ios", "expression": "device.os == 'ios'"}], "parameters": {"a": {"defaultValue": {"value": "two"}}, "b": {"defaultValue": {"value": "new"}, "conditionalValues": {"ios": {"value": "apple"}}}}}"#

    /// Runs a test body against a fresh server, stopping it (SIGTERM) at the end.
    func withServer(_ body: (ServeProcess) async throws -> Void) async throws {
        let server = try await ServeProcess.start()
        defer {
            let status = server.stop()
            #expect(!server.process.isRunning)
            #expect(status == 0, "vane serve exited with \(status) after SIGTERM: \(server.log)")
        }
        try await body(server)
    }

    @Test func publishValidatesFirstThenPublishesWithTheCurrentETag() async throws {
        try await withServer { server in
            let file = try CLIRunner.temporaryFile(Self.flags)
            let published = try await server.run(["publish", file, "--message", "first try"])
            #expect(published.status == 0, "\(published.stderr)")
            // The demo project starts with version 1.
            #expect(
                published.stdout == "Published version 2 of demo/production (INCREMENTAL_UPDATE; previous version 1).\n"
            )
            #expect(!published.stdout.contains(server.adminKey) && !published.stderr.contains(server.adminKey))

            let invalid = try CLIRunner.temporaryFile(
                #"{"conditions": [{"name": "c", "expression": "percent <= 200"}], "parameters": {"flag": {"defaultValue": {"value": "yes"}, "valueType": "BOOLEAN"}}}"#,
                name: "broken.json"
            )
            let refused = try await server.run(["publish", invalid])
            #expect(refused.status == 1)
            #expect(refused.stdout.isEmpty)
            #expect(refused.stderr.contains("broken.json: error: conditions[0].expression"))
            #expect(refused.stderr.contains("broken.json: error: parameters.flag.defaultValue.value"))
            #expect(refused.stderr.contains("2 errors; nothing was published"))

            let versions = try await server.run(["versions", "--json"])
            let list = try JSONValue.parse(versions.stdout).objectValue?["versions"]?.arrayValue ?? []
            #expect(list.count == 2)
            #expect(list.first?.objectValue?["description"] == "first try")
        }
    }

    @Test func aStaleVersionIsRefusedUnlessForced() async throws {
        try await withServer { server in
            let file = try CLIRunner.temporaryFile(Self.flags)
            #expect(try await server.run(["publish", file]).status == 0)  // version 2
            let other = try CLIRunner.temporaryFile(Self.moreFlags)

            let stale = try await server.run(["publish", other, "--if-version", "1"])
            #expect(stale.status == 1)
            #expect(stale.stdout.isEmpty)
            #expect(
                stale.stderr.contains(
                    "someone published version 2 of demo/production after you read version 1; nothing was published."
                ),
                "\(stale.stderr)"
            )
            #expect(stale.stderr.contains("vane diff 1 2"))
            #expect(stale.stderr.contains("--force"))

            let current = try await server.run(["publish", other, "--if-version", "2"])
            #expect(
                current.stdout == "Published version 3 of demo/production (INCREMENTAL_UPDATE; previous version 2).\n"
            )

            let forced = try await server.run(["publish", file, "--force"])
            #expect(forced.status == 0, "\(forced.stderr)")
            #expect(forced.stdout == "Published version 4 of demo/production (FORCED_UPDATE).\n")

            let conflicting = try await server.run(["publish", file, "--force", "--if-version", "1"])
            #expect(conflicting.status == 2)
        }
    }

    @Test func getVersionsDiffAndRollback() async throws {
        try await withServer { server in
            _ = try await server.run(["publish", try CLIRunner.temporaryFile(Self.flags), "--message", "only a"])
            _ = try await server.run(["publish", try CLIRunner.temporaryFile(Self.moreFlags), "--message", "add b"])

            let current = try await server.run(["get"])
            #expect(current.status == 0, "\(current.stderr)")
            let template = try ConfigTemplate(data: Array(current.stdout.utf8))
            #expect(template.version?.versionNumber == "3")
            #expect(template.parameter(forKey: "b") != nil)

            let old = try await server.run(["get", "--version", "2"])
            #expect(try ConfigTemplate(data: Array(old.stdout.utf8)).parameter(forKey: "b") == nil)

            let output = FileManager.default.temporaryDirectory.appendingPathComponent("vane-get-\(UUID()).json").path
            let written = try await server.run(["get", "--output", output])
            #expect(written.stdout == "Wrote version 3 of demo/production to \(output).\n")
            #expect(try ConfigTemplate(data: Array(try Data(contentsOf: URL(fileURLWithPath: output)))) == template)

            let missing = try await server.run(["get", "--version", "99"])
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("no template version 99"))

            let diff = try await server.run(["diff", "2", "3"])
            #expect(
                diff.stdout == """
                    Changes from version 2 to version 3 (+ added, - removed, ~ changed):
                    Parameters:
                      + b
                      ~ a
                    Conditions:
                      + ios

                    """
            )
            #expect(
                try await server.run(["diff", "3", "3"]).stdout == "No differences between version 3 and version 3.\n"
            )

            let rollback = try await server.run(["rollback", "2"])
            #expect(rollback.status == 0, "\(rollback.stderr)")
            #expect(rollback.stdout == "Rolled back demo/production to version 2: published it again as version 4.\n")

            let versions = try await server.run(["versions", "--limit", "3"])
            let lines = versions.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 4, "\(versions.stdout)")
            #expect(lines[0].hasPrefix("VERSION  TIME"))
            #expect(
                lines[0].contains("  TYPE  ") && lines[0].contains("  USER  ") && lines[0].hasSuffix("  DESCRIPTION")
            )
            #expect(lines[1].hasPrefix("4 "))
            #expect(lines[1].contains("ROLLBACK (from 2)"))
            #expect(lines[1].hasSuffix("Rollback to version 2"))
            #expect(lines[2].hasPrefix("3 ") && lines[2].contains("INCREMENTAL_UPDATE") && lines[2].hasSuffix("add b"))
            #expect(lines[3].hasPrefix("2 ") && lines[3].hasSuffix("only a"))
            #expect(lines[2].contains("admin (--admin-key)"))

            #expect(try await server.run(["versions", "--limit", "0"]).status == 2)

            // One flag as version 3 had it, with a reason: b comes back, a stays as version 4 has it.
            let one = try await server.run(["rollback", "3", "--flag", "b", "--reason", "b was fine"])
            #expect(one.status == 0, "\(one.stderr)")
            #expect(one.stdout == "Restored b in demo/production as version 3 had it: published as version 5.\n")
            let restored = try ConfigTemplate(data: Array(try await server.run(["get"]).stdout.utf8))
            #expect(restored.parameter(forKey: "b") != nil)
            let versionTwo = try ConfigTemplate(data: Array(old.stdout.utf8))
            #expect(restored.parameter(forKey: "a") == versionTwo.parameter(forKey: "a"), "a stays as version 4 has it")
            let latest = try await server.run(["versions", "--limit", "1"])
            #expect(latest.stdout.contains("Rollback of b to version 3: b was fine"), "\(latest.stdout)")
            let unknown = try await server.run(["rollback", "3", "--flag", "nope"])
            #expect(unknown.status == 1)
            #expect(unknown.stderr.contains("nope"), "\(unknown.stderr)")
        }
    }

    @Test func rebaseMergesFieldByFieldListsConflictsAndTakesChoices() async throws {
        try await withServer { server in
            _ = try await server.run(["publish", try CLIRunner.temporaryFile(Self.flags), "--message", "only a"])
            // Someone publishes a new default of a on version 2; mine, written on 2, describes it.
            _ = try await server.run([
                "publish",
                try CLIRunner.temporaryFile(#"{"parameters": {"a": {"defaultValue": {"value": "theirs"}}}}"#),
                "--message", "theirs",
            ])
            let described = try CLIRunner.temporaryFile(
                #"{"parameters": {"a": {"defaultValue": {"value": "one"}, "description": "mine"}}}"#
            )
            let merged = try await server.run(["rebase", "--base", "2", described])
            #expect(merged.status == 0, "\(merged.stderr)")
            let template = try ConfigTemplate(data: Array(merged.stdout.utf8))
            #expect(template.parameter(forKey: "a")?.defaultValue == .value("theirs"))
            #expect(template.parameter(forKey: "a")?.description == "mine")

            let mine = try CLIRunner.temporaryFile(#"{"parameters": {"a": {"defaultValue": {"value": "mine"}}}}"#)
            let conflict = try await server.run(["rebase", "--base", "2", mine])
            #expect(conflict.status == 1)
            #expect(
                conflict.stdout.hasPrefix(
                    """
                    1 field(s) changed differently here and in version 3 of demo/production:
                      parameter a defaultValue: base "one", mine "mine", theirs "theirs"

                    """
                ),
                "\(conflict.stdout)"
            )

            let choices = try CLIRunner.temporaryFile(
                #"[{"kind": "parameter", "name": "a", "field": "defaultValue", "take": "mine"}]"#
            )
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("vane-rebase-\(UUID()).json")
                .path
            let kept = try await server.run(["rebase", "--base", "2", mine, "--choices", choices, "--output", output])
            #expect(kept.status == 0, "\(kept.stderr)")
            #expect(
                kept.stdout == """
                    Wrote the template merged onto version 3 of demo/production to \(output).
                    warning: reverts live change: a defaultValue "one" → "theirs" (becomes "mine")

                    """
            )
            let written = try ConfigTemplate(data: Array(try Data(contentsOf: URL(fileURLWithPath: output))))
            #expect(written.parameter(forKey: "a")?.defaultValue == .value("mine"))
            #expect(try await server.run(["rebase", "--base", "-1", mine]).status == 2)
        }
    }

    @Test func flagsSwitchTurnsAFlagOffAndBackOn() async throws {
        try await withServer { server in
            let preview = try await server.run(["flags", "switch", "off", "payments_enabled", "--dry-run"])
            #expect(preview.status == 0, "\(preview.stderr)")
            #expect(
                preview.stdout == """
                    Switching payments_enabled off in demo/production would change version 1 like this:
                    VALUE          BEFORE  AFTER
                    everyone else  true    false

                    """
            )

            let off = try await server.run(["flags", "switch", "off", "payments_enabled", "-m", "outage"])
            #expect(off.status == 0, "\(off.stderr)")
            #expect(off.stdout.hasPrefix("Switched payments_enabled off in demo/production: published version 2.\n"))
            let again = try await server.run(["flags", "switch", "off", "payments_enabled", "-m", "retry"])
            #expect(again.stdout.hasPrefix("payments_enabled is already off in demo/production: nothing changed"))
            let on = try await server.run(["flags", "switch", "on", "payments_enabled", "-m", "fixed", "--json"])
            #expect(try JSONValue.parse(on.stdout).objectValue?["versionNumber"] == "3", "\(on.stdout)")
            let versions = try await server.run(["versions", "--json"])
            let list = try JSONValue.parse(versions.stdout).objectValue?["versions"]?.arrayValue ?? []
            #expect(list.first?.objectValue?["description"] == "fixed")

            let notBoolean = try await server.run(["flags", "switch", "off", "banner_text", "-m", "x"])
            #expect(notBoolean.status == 1)
            #expect(notBoolean.stderr.contains("only Boolean flags have a kill switch"), "\(notBoolean.stderr)")
            #expect(try await server.run(["flags", "switch", "off", "payments_enabled"]).status == 2)
            #expect(try await server.run(["flags", "switch", "down", "payments_enabled", "-m", "x"]).status == 2)
        }
    }

    @Test func flagsCopyShowsTheChangeAndPublishesItInTheTarget() async throws {
        try await withServer { server in
            // Staging turns payments off; copying that flag to production shows and then publishes it.
            let off = try await server.run([
                "flags", "switch", "off", "payments_enabled", "-m", "outage", "--environment", "staging",
            ])
            #expect(off.status == 0, "\(off.stderr)")
            let preview = try await server.run([
                "flags", "copy", "payments_enabled", "--environment", "staging", "--to", "production",
            ])
            #expect(preview.status == 0, "\(preview.stderr)")
            #expect(preview.stdout.hasPrefix("payments_enabled → production: replaces the flag there.\nKEY"))
            #expect(preview.stdout.contains("payments_enabled  "), "\(preview.stdout)")
            let published = try await server.run([
                "flags", "copy", "payments_enabled", "--environment", "staging", "--to", "production", "--publish",
                "-m", "outage everywhere",
            ])
            #expect(published.status == 0, "\(published.stderr)")
            #expect(published.stdout.hasSuffix("Published version 2 of production.\n"), "\(published.stdout)")
            let versions = try await server.run(["versions", "--json"])
            let list = try JSONValue.parse(versions.stdout).objectValue?["versions"]?.arrayValue ?? []
            #expect(list.first?.objectValue?["description"] == "outage everywhere")
            let missing = try await server.run([
                "flags", "copy", "nothing", "--environment", "staging", "--to", "production",
            ])
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("the source has no flag \"nothing\""), "\(missing.stderr)")
        }
    }

    @Test func explainShowsWhoGetsWhatOnTheServer() async throws {
        try await withServer { server in
            let context = try CLIRunner.temporaryFile(#"{"randomizationId": "u1", "device.country": "at"}"#)
            let explained = try await server.run(["explain", "--context", context])
            #expect(explained.status == 0, "\(explained.stderr)")
            let lines = explained.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == "Version 1 of demo/production:")
            #expect(lines.count > 2 && lines[1].hasPrefix("KEY") && lines[1].hasSuffix("WHY"), "\(explained.stdout)")
            let banner = try #require(lines.first { $0.hasPrefix("banner_text ") })
            #expect(banner.contains("Willkommen bei Vane!") && banner.hasSuffix("conditionalValue (germany_austria)"))

            let compared = try await server.run(["explain", "--context", context, "--compare", "staging", "--json"])
            let object = try JSONValue.parse(compared.stdout).objectValue
            #expect(object?["compareEnvironment"] == "staging", "\(compared.stdout)")

            let missing = try await server.run(["explain", "--context", context, "--compare", "nowhere"])
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("nowhere"), "\(missing.stderr)")
        }
    }

    @Test func createListAndRevokeKeys() async throws {
        try await withServer { server in
            let created = try await server.run(["keys", "create", "--role", "client", "--name", "ios-app"])
            #expect(created.status == 0, "\(created.stderr)")
            let lines = created.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 2)
            #expect(lines[0].hasPrefix("Created client key \"ios-app\" (id "))
            #expect(lines[0].hasSuffix(") for demo/production."))
            let secret = lines[1]
            #expect(secret.hasPrefix("vane_client_"))
            #expect(created.stderr.contains("only time the key is shown"))
            let id = String(lines[0].split(separator: "(id ")[1].prefix { $0 != ")" })

            let list = try await server.run(["keys", "list"])
            #expect(list.stdout.hasPrefix("ID "))
            let row = try #require(list.stdout.split(separator: "\n").first { $0.hasPrefix(id) })
            #expect(row.contains("client") && row.contains("demo/production") && row.contains("active"))
            #expect(row.hasSuffix("ios-app"))
            #expect(!list.stdout.contains(secret))

            // A client key may not read templates: the server's message, exit 1.
            let forbidden = try await server.run(["get"], key: secret)
            #expect(forbidden.status == 1)
            #expect(forbidden.stderr.contains("HTTP 403 PERMISSION_DENIED"), "\(forbidden.stderr)")
            #expect(!forbidden.stderr.contains(secret))

            let revoked = try await server.run(["keys", "revoke", id])
            #expect(revoked.stdout == "Revoked key \(id).\n")
            let after = try await server.run(["keys", "list", "--json"])
            let keys = try JSONValue.parse(after.stdout).objectValue?["keys"]?.arrayValue ?? []
            #expect(keys.first { $0.objectValue?["id"]?.stringValue == id }?.objectValue?["revokeTime"] != nil)
            #expect(try await server.run(["get"], key: secret).status == 1)

            let admin = try await server.run(["keys", "create", "--role", "admin", "--name", "ops", "--json"])
            let json = try JSONValue.parse(admin.stdout).objectValue
            #expect(json?["role"] == "admin")
            #expect(json?["project"] == nil)
            #expect(try await server.run(["keys", "create", "--role", "owner", "--name", "x"]).status == 2)
        }
    }

    @Test func webhooksAreCreatedListedRotatedAndDeleted() async throws {
        let server = try await ServeProcess.start(arguments: ["--webhooks-allow-private-addresses"])
        defer { _ = server.stop() }
        let created = try await server.run([
            "webhooks", "create", "http://127.0.0.1:9/hook", "--event", "version.published", "--description", "CI",
        ])
        #expect(created.status == 0, "\(created.stderr)")
        let lines = created.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(
            lines[0].hasPrefix("Created webhook endpoint ep_")
                && lines[0].hasSuffix(" for demo: http://127.0.0.1:9/hook")
        )
        let secret = lines[1]
        #expect(secret.hasPrefix("whsec_"))
        #expect(created.stderr.contains("only time the secret is shown"))
        let id = String(lines[0].split(separator: " ")[3])

        let list = try await server.run(["webhooks", "list"])
        let row = try #require(list.stdout.split(separator: "\n").first { $0.hasPrefix(id) })
        #expect(
            row.contains("enabled") && row.contains("version.published") && row.hasSuffix("http://127.0.0.1:9/hook")
        )
        #expect(!list.stdout.contains(secret))

        let published = try await server.run(["publish", try CLIRunner.temporaryFile(Self.flags), "--message", "hook"])
        #expect(published.status == 0, "\(published.stderr)")
        let deliveries = try await server.run(["webhooks", "deliveries", id])
        #expect(deliveries.stdout.hasPrefix("MESSAGE "), "\(deliveries.stdout)")
        #expect(deliveries.stdout.contains("version.published") && deliveries.stdout.contains("production@2"))

        let rotated = try await server.run(["webhooks", "rotate-secret", id, "--grace-hours", "1"])
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let newSecret = rotated.stdout.split(separator: "\n").map(String.init).last ?? ""
        #expect(newSecret.hasPrefix("whsec_") && newSecret != secret)

        let refused = try await server.run(["webhooks", "rotate-secret", id, "--grace-hours", "500"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("\"graceHours\" must be from 0 to 168"), "\(refused.stderr)")

        #expect(try await server.run(["webhooks", "delete", id]).stdout == "Deleted webhook endpoint \(id).\n")
        let gone = try await server.run(["webhooks", "deliveries", id])
        #expect(gone.status == 1)
        #expect(gone.stderr.contains("no webhook endpoint"), "\(gone.stderr)")
    }

    @Test func createListUpdateAndResetUsers() async throws {
        try await withServer { server in
            let created = try await server.run([
                "users", "create", "--email", "Pat@Example.com", "--role", "editor", "--environments",
                "demo/staging, demo/production",
            ])
            #expect(created.status == 0, "\(created.stderr)")
            let lines = created.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 2)
            #expect(lines[0].hasPrefix("Created editor account pat@example.com (id u_"))
            #expect(lines[1].count == 20)
            #expect(created.stderr.contains("shown only now"))
            let id = String(lines[0].split(separator: "(id ")[1].prefix { $0 != ")" })

            let list = try await server.run(["users", "list"])
            let row = try #require(list.stdout.split(separator: "\n").first { $0.hasPrefix(id) })
            #expect(row.contains("pat@example.com") && row.contains("demo/staging,demo/production"))
            #expect(row.hasSuffix("active"))
            #expect(!list.stdout.contains(lines[1]))

            let updated = try await server.run(["users", "update", id, "--role", "viewer", "--disable-account"])
            #expect(updated.stdout == "Updated account \(id).\n", "\(updated.stderr)")
            let after = try await server.run(["users", "list", "--json"])
            let user = try JSONValue.parse(after.stdout).objectValue?["users"]?.arrayValue?
                .first { $0.objectValue?["id"]?.stringValue == id }?.objectValue
            #expect(user?["role"] == "viewer")
            #expect(user?["disableTime"] != nil)
            #expect(try await server.run(["users", "update", id]).status == 2)
            let reset = try await server.run(["users", "reset-password", id])
            #expect(reset.stdout.trimmingCharacters(in: .newlines).count == 20)
            #expect(try await server.run(["users", "reset-password", "u_nobody"]).status == 1)
        }
    }

    @Test func importsAFirebaseServerTemplate() async throws {
        try await withServer { server in
            let file = try CLIRunner.temporaryFile(
                #"""
                {"conditions": [
                  {"name": "premium", "condition": {"customSignal": {"customSignalOperator": "STRING_EXACTLY_MATCHES", "customSignalKey": "tier", "targetCustomSignalValues": ["premium"]}}},
                  {"name": "odd", "condition": {"someFutureCondition": {}}}
                 ],
                 "parameters": {
                   "max_items": {"defaultValue": {"value": "10"}, "conditionalValues": {"premium": {"value": "100"}, "odd": {"value": "1"}}, "valueType": "NUMBER"}
                 }}
                """#,
                name: "server-template.json"
            )
            let imported = try await server.run(["import", "firebase", file])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(
                imported.stdout.hasPrefix(
                    "Imported the Firebase server template \(file) into demo/production: Published version 2 of demo/production (INCREMENTAL_UPDATE; previous version 1).\nKept: 1 parameter, 2 conditions.\nCannot evaluate (kept as written, so exporting gives them back):\n  conditions[1].condition"
                ),
                "\(imported.stdout)"
            )
            let versions = try await server.run(["versions", "--json"])
            #expect(versions.stdout.contains("Imported from Firebase (server-template.json)"))
            let stored = try ConfigTemplate(data: Array(try await server.run(["get"]).stdout.utf8))
            #expect(stored.isServerTemplate)
            #expect(stored.conditions.count == 2)
        }
    }

    @Test func importsAFirebaseClientTemplateWithManagedValues() async throws {
        try await withServer { server in
            let file = try CLIRunner.temporaryFile(
                #"""
                {"conditions": [{"name": "beta", "expression": "device.os == 'ios'"}],
                 "parameters": {
                   "new_checkout": {"defaultValue": {"rolloutValue": {"rolloutId": "rollout_1", "value": "true", "percent": 10}}, "valueType": "BOOLEAN"},
                   "color": {"defaultValue": {"value": "blue"}, "conditionalValues": {"beta": {"experimentValue": {"experimentId": "exp_1", "variantValue": [{"variantId": "A", "value": "red"}]}}}}
                 },
                 "parameterGroups": {"ui": {"parameters": {"font": {"defaultValue": {"value": "Inter"}}}}},
                 "version": {"versionNumber": "42", "description": "from the console"}}
                """#,
                name: "client.json"
            )
            let imported = try await server.run(["import", "firebase", file, "--message", "move off Firebase"])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(
                imported.stdout == """
                    Imported the Firebase client template \(file) into demo/production: Published version 2 of demo/production (INCREMENTAL_UPDATE; previous version 1).
                    Kept: 3 parameters, 1 condition, 1 parameter group.
                    Cannot evaluate (kept as written, so exporting gives them back):
                      parameters.new_checkout.defaultValue: rolloutValue is managed by Firebase; Vane serves it as useInAppDefault
                      parameters.color.conditionalValues.beta: experimentValue is managed by Firebase; Vane serves it as useInAppDefault

                    """
            )
            let stored = try ConfigTemplate(data: Array(try await server.run(["get"]).stdout.utf8))
            #expect(stored.version?.description == "move off Firebase")
            #expect(stored.parameter(forKey: "new_checkout")?.defaultValue?.kind == .managed("rolloutValue"))
        }
    }

    @Test func exportForFirebaseReportsWhatItLeavesOut() async throws {
        try await withServer { server in
            let template = try CLIRunner.temporaryFile(
                #"{"conditions": [{"name": "either", "expression": "device.os == 'ios' || device.country in ['de']"}, {"name": "ios", "expression": "device.os == 'ios'"}], "parameters": {"a": {"defaultValue": {"value": "x"}, "conditionalValues": {"either": {"value": "y"}, "ios": {"value": "z"}}, "vane": {"title": "A"}}}}"#
            )
            #expect(try await server.run(["publish", template]).status == 0)

            let plain = try await server.run(["export"])
            #expect(plain.status == 0)
            #expect(try ConfigTemplate(data: Array(plain.stdout.utf8)).conditions.count == 2)

            let exported = try await server.run(["export", "--firebase"])
            #expect(exported.status == 0, "\(exported.stderr)")
            let firebase = try ConfigTemplate(data: Array(exported.stdout.utf8))
            #expect(firebase.conditions.map(\.name) == ["ios"])
            #expect(firebase.parameter(forKey: "a")?.conditionalValues.map(\.conditionName) == ["ios"])
            #expect(firebase.parameter(forKey: "a")?.metadata == nil)
            #expect(
                exported.stderr.hasPrefix(
                    "warning: the Firebase export is incomplete: 1 condition left out, with its conditional values (Firebase cannot express them):\n  conditions[0].expression: condition \"either\" left out"
                ),
                "\(exported.stderr)"
            )

            let output = FileManager.default.temporaryDirectory.appendingPathComponent("vane-export-\(UUID()).json")
                .path
            let toFile = try await server.run(["export", "--firebase", "--output", output])
            #expect(toFile.stdout == "Wrote version 2 of demo/production to \(output) for Firebase.\n")
            #expect(toFile.stderr.contains("left out"))
        }
    }

    @Test func aWrongKeyGetsTheServersMessage() async throws {
        try await withServer { server in
            let wrong = "vane_admin_not-a-real-key-\(UUID().uuidString)"
            let output = try await server.run(["versions"], key: wrong)
            #expect(output.status == 1)
            #expect(output.stderr.hasPrefix("error: "))
            #expect(output.stderr.contains("HTTP 401 UNAUTHENTICATED"), "\(output.stderr)")
            #expect(!output.stderr.contains(wrong) && !output.stdout.contains(wrong))
        }
    }

    @Test func aServerThatIsNotRunningGetsAClearMessage() async throws {
        // Start and stop a server, so the port is one nothing listens on.
        let server = try await ServeProcess.start()
        #expect(server.stop() == 0)
        let output = try await server.run(["get"])
        #expect(output.status == 1)
        #expect(
            output.stderr.hasPrefix("cannot connect to the Vane server at \(server.url) (connection refused)"),
            "\(output.stderr)"
        )
        #expect(output.stderr.contains("is `vane serve` running?"))
    }

    @Test func usageErrors() async throws {
        let noKey = try await CLIRunner.run(["versions"], environment: ["VANE_SERVER": "http://127.0.0.1:9"])
        #expect(noKey.status == 2)
        #expect(noKey.stderr.contains("VANE_KEY"))
        let badURL = try await CLIRunner.run(
            ["versions", "--server", "localhost:8080"],
            environment: ["VANE_KEY": "k"]
        )
        #expect(badURL.status == 2)
        #expect(badURL.stderr.contains("not an http:// or https:// URL"))
        #expect(try await CLIRunner.run(["rollback"], environment: ["VANE_KEY": "k"]).status == 2)
    }

    @Test func experimentsAreCreatedListedStartedAndStopped() async throws {
        try await withServer { server in
            let definition = try CLIRunner.temporaryFile(
                #"""
                {"key": "checkout-button", "parameters": ["checkout_variant"],
                 "variants": [{"name": "control", "weight": 50},
                              {"name": "new-flow", "condition": "checkout_test_b", "weight": 50}],
                 "primaryMetric": {"event": "checkout_completed", "kind": "conversion"}}
                """#,
                name: "experiment.json"
            )
            let created = try await server.run(["experiments", "create", definition])
            #expect(created.status == 0, "\(created.stderr)")
            #expect(
                created.stdout
                    == "Created experiment checkout-button in demo/production as a draft; start it with: vane experiments start checkout-button\n"
            )
            let started = try await server.run(["experiments", "start", "checkout-button"])
            #expect(started.stdout == "Started experiment checkout-button in demo/production on template version 1.\n")
            let listed = try await server.run(["experiments", "list", "--status", "running"])
            let lines = listed.stdout.split(separator: "\n")
            #expect(lines.first?.hasPrefix("KEY") == true, "\(listed.stdout)")
            #expect(lines.count == 2, "\(listed.stdout)")
            #expect(
                lines.last?.contains("checkout-button  running  control 50 / new-flow 50  checkout_completed") == true
            )

            // Two units see the experiment, one of them converts: results and export read them.
            let now = Date().timeIntervalSince1970
            func time(_ offset: Double) -> JSONValue {
                .string(ISO8601Timestamp.string(milliseconds: Int64((now + offset) * 1_000)))
            }
            let events: JSONValue = [
                "events": [
                    [
                        "id": "e1", "type": "exposure", "unit": "u1", "time": time(-60),
                        "experiment": "checkout-button", "variant": "control",
                    ],
                    [
                        "id": "e2", "type": "exposure", "unit": "u2", "time": time(-50),
                        "experiment": "checkout-button", "variant": "new-flow",
                    ],
                    ["id": "e3", "type": "metric", "unit": "u2", "time": time(-40), "name": "checkout_completed"],
                    ["id": "e4", "type": "metric", "unit": "u2", "time": time(-30), "name": "unrelated"],
                ]
            ]
            var request = URLRequest(
                url: try #require(URL(string: server.url + "/v1/projects/demo/environments/production/events"))
            )
            request.httpMethod = "POST"
            request.setValue("Bearer \(server.adminKey)", forHTTPHeaderField: "Authorization")
            request.httpBody = Data(events.serialized().utf8)
            let (_, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)

            let results = try await server.run(["experiments", "results", "checkout-button"])
            #expect(results.status == 0, "\(results.stderr)")
            #expect(
                results.stdout.hasPrefix("Experiment checkout-button: running, sequential, 95% confidence, started 20"),
                "\(results.stdout)"
            )
            #expect(
                results.stdout.contains("Health: split as configured (p = 1.0000); 0 unit(s) in several variants"),
                "\(results.stdout)"
            )
            #expect(results.stdout.contains("checkout_completed (primary): share of units that converted"))
            #expect(results.stdout.contains("new-flow  1/1"), "\(results.stdout)")
            // Each variant's own interval (Wilson: 0 of 1 converted, at 95 %), and the relative
            // always-valid interval beside the absolute one.
            let header = try #require(results.stdout.split(separator: "\n").first { $0.hasPrefix("VARIANT   UNITS") })
            let columns = header.split(separator: "  ", omittingEmptySubsequences: true).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            #expect(
                columns == [
                    "VARIANT", "UNITS", "VALUE", "95% INTERVAL", "DIFFERENCE", "95% ALWAYS-VALID INTERVAL", "RELATIVE",
                    "P-VALUE",
                ],
                "\(results.stdout)"
            )
            #expect(results.stdout.contains("[0.00%, 79.35%]"), "control's 0 of 1: \(results.stdout)")
            #expect(results.stdout.contains("[20.65%, 100.00%]"), "new-flow's 1 of 1: \(results.stdout)")
            let resultsJSON = try await server.run(["experiments", "results", "checkout-button", "--json"])
            #expect(try JSONValue.parse(resultsJSON.stdout).objectValue?["experiment"] == "checkout-button")

            let exported = try await server.run(["experiments", "export", "checkout-button"])
            #expect(exported.status == 0, "\(exported.stderr)")
            let ids = exported.stdout.split(separator: "\n").map { try? JSONValue.parse(String($0)).objectValue?["id"] }
            #expect(
                ids == ["e1", "e2", "e3"],
                "the experiment's exposures and the events its metrics read, in the order received"
            )
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "export-\(UUID().uuidString).ndjson"
            )
            let since = ISO8601Timestamp.string(milliseconds: Int64((now - 45) * 1_000))
            let written = try await server.run([
                "experiments", "export", "checkout-button", "--since", since, "-o", file.path,
            ])
            #expect(written.status == 0, "\(written.stderr)")
            #expect(try String(contentsOf: file, encoding: .utf8).split(separator: "\n").count == 1)
            let badTime = try await server.run(["experiments", "export", "checkout-button", "--since", "yesterday"])
            #expect(badTime.status == 2)
            #expect(badTime.stderr.contains("--since must be an RFC 3339 time"), "\(badTime.stderr)")

            let stopped = try await server.run(["experiments", "stop", "checkout-button"])
            #expect(stopped.stdout == "Stopped experiment checkout-button in demo/production.\n")
            let shown = try await server.run(["experiments", "show", "checkout-button"])
            #expect(try JSONValue.parse(shown.stdout).objectValue?["status"] == "stopped")

            let bad = try CLIRunner.temporaryFile(
                #"{"key": "x", "parameters": ["nope"], "variants": [], "primaryMetric": {"event": "e", "kind": "mean"}}"#
            )
            let refused = try await server.run(["experiments", "create", bad])
            #expect(refused.status == 1)
            #expect(
                refused.stderr.contains("error: variants: an experiment needs at least two variants"),
                "\(refused.stderr)"
            )
            let none = try await server.run(["experiments", "list", "--status", "draft"])
            #expect(none.stdout == "No experiments in demo/production with status draft.\n")
        }
    }

}
