import Testing
import VaneCodegen
import VaneCore

/// `vane flags check`'s findings, from file contents.
@Suite struct FlagsCheckTests {
    let flags = FlagsFile(flags: [
        FlagDefinition(key: "new_checkout", type: .bool, defaultValue: "false"),
        FlagDefinition(key: "max_items", type: .int, defaultValue: "3"),
        FlagDefinition(key: "old_banner", type: .string, defaultValue: ""),
        FlagDefinition(key: "layout", type: .json, defaultValue: "{}"),
    ])

    let sources: [(path: String, text: String)] = [
        ("App/Checkout.swift", "if flags.newCheckout { show() }\nlet n = client[.maxItemsLimit]\n"),
        (
            "App/Legacy.swift",
            "let a = client.int(forKey: \"max_items\", default: 1)\nlet b = client.bool(forKey: \"promo\", default: false)\n"
        ),
        (
            "App/More.swift",
            "let l = client.decode(Layout.self, forKey: \"layout\")\nclient.setOverride(\"1\", forKey: \"ghost\")\n"
        ),
        (
            "App/Keys.swift",
            "extension RemoteKeys { static let x = FeatureFlag(\"declared_elsewhere\", default: true) }\n"
        ),
        (
            "Generated/VaneFlags.swift",
            FlagsCheck.generatedMarker + " from vane-flags.json.\nvar oldBanner: String { reader[.oldBanner] }\n"
        ),
    ]

    @Test func staleAndUndefinedFlags() {
        let report = FlagsCheck.check(flags: flags, sources: sources, template: nil)
        #expect(report.stale == ["old_banner"], "the generated file does not count as a reference")
        #expect(report.undefined.map(\.key) == ["promo", "ghost", "declared_elsewhere"])
        #expect(
            report.undefined.map(\.location.description) == [
                "App/Legacy.swift:2", "App/More.swift:2", "App/Keys.swift:1",
            ]
        )
        #expect(report.missingOnServer.isEmpty && report.typeDifferences.isEmpty)
        #expect(report.hasProblems)
    }

    @Test func aMemberNameMustEndWhereTheIdentifierEnds() {
        let report = FlagsCheck.check(
            flags: FlagsFile(flags: [FlagDefinition(key: "max_items", type: .int, defaultValue: "1")]),
            sources: [("A.swift", "let n = client[.maxItemsLimit]")],
            template: nil
        )
        #expect(report.stale == ["max_items"])
    }

    @Test func missingAndDifferentlyTypedOnTheServer() throws {
        let template = try ConfigTemplate(
            data: Array(
                #"{"parameters": {"new_checkout": {"defaultValue": {"value": "1"}, "valueType": "NUMBER"}, "max_items": {"defaultValue": {"value": "3"}, "valueType": "NUMBER"}, "layout": {"defaultValue": {"value": "{}"}}}}"#
                    .utf8
            )
        )
        let report = FlagsCheck.check(flags: flags, sources: sources, template: template)
        #expect(report.missingOnServer == ["old_banner"])
        #expect(
            report.typeDifferences == [
                FlagsCheckReport.TypeDifference(key: "new_checkout", localType: "bool", serverType: "NUMBER"),
                FlagsCheckReport.TypeDifference(key: "layout", localType: "json", serverType: "STRING"),
            ]
        )
    }

    @Test func aCleanProjectHasNoProblems() {
        let report = FlagsCheck.check(
            flags: FlagsFile(flags: [FlagDefinition(key: "on", type: .bool, defaultValue: "true")]),
            sources: [("A.swift", "if flags.on { }")],
            template: nil
        )
        #expect(!report.hasProblems)
    }
}
