import Testing
import VaneCodegen
import VaneCore

/// Names, collisions and the shape of the generated code. (Generated code is compiled by the
/// GeneratedFlagsTests target through the build plugin, and by vaneTests for every input format.)
@Suite struct SwiftGeneratorTests {
    func flags(_ keys: [String], type: FlagType = .bool) -> FlagsFile {
        FlagsFile(
            flags: keys.enumerated().map {
                FlagDefinition(
                    key: $0.element,
                    type: type,
                    defaultValue: "false",
                    path: JSONPath.root.appending($0.offset)
                )
            }
        )
    }

    @Test(arguments: [
        ("new_checkout", "newCheckout"), ("new-checkout", "newCheckout"), ("ui.dark_mode", "uiDarkMode"),
        ("HTTP_timeout", "httpTimeout"), ("maxItems", "maxItems"), ("3d_touch", "_3dTouch"), ("a__b", "aB"),
    ])
    func keysBecomeLowerCamelCase(key: String, name: String) {
        #expect(SwiftIdentifier.lowerCamelCase(key) == name)
    }

    @Test func keywordsAreEscaped() throws {
        let source = try SwiftGenerator().generate(flags(["default", "class", "self_test"]))
        #expect(source.contains("case `default`"))
        #expect(source.contains("static let `class` = FeatureFlag(\"class\""))
        #expect(source.contains("var selfTest: Bool"))
    }

    @Test func collisionsAndUnnamableKeysNameTheFlags() {
        do {
            _ = try SwiftGenerator().generate(flags(["new_checkout", "newCheckout", "---", "reader"]))
            Issue.record("accepted")
        } catch {
            let messages = error.issues.map(\.description)
            #expect(
                messages.contains {
                    $0.contains(#"flag "newCheckout" and flag "new_checkout" both become the Swift name `newCheckout`"#)
                }
            )
            #expect(messages.contains { $0.contains(#"flag "---": the key has no letter or digit"#) })
            #expect(
                messages.contains {
                    $0.contains(#"flag "reader" becomes `reader`, which the generated type Flags uses"#)
                }
            )
        }
    }

    @Test func variantCollisionsAndBadTypeNamesAreRefused() {
        let file = FlagsFile(flags: [
            FlagDefinition(
                key: "test",
                type: .experiment(variants: ["one-page", "one_page"]),
                defaultValue: "one-page"
            ),
            FlagDefinition(key: "layout", type: .json, defaultValue: "{}", swiftType: "Not A Type"),
        ])
        do {
            _ = try SwiftGenerator(typeName: "my flags").generate(file)
            Issue.record("accepted")
        } catch {
            let messages = error.issues.map(\.description)
            #expect(messages.contains { $0.contains(#"the type name "my flags" is not a Swift identifier"#) })
            #expect(messages.contains { $0.contains(#"the variants "one_page" and "one-page" both become `onePage`"#) })
            #expect(messages.contains { $0.contains(#"swiftType "Not A Type" is not a Swift type name"#) })
        }
    }

    @Test func publicAccessAndTypeNameApplyEverywhere() throws {
        let source = try SwiftGenerator(accessLevel: .public, typeName: "AppFlags").generate(flags(["on"]))
        #expect(source.contains("public enum AppFlagsKey: String, CaseIterable, Sendable"))
        #expect(source.contains("public struct AppFlags: Sendable"))
        #expect(source.contains("public static let on = FeatureFlag(\"on\", default: false)"))
        #expect(source.contains("public var on: Bool"))
        #expect(source.contains("public static let defaults = InAppDefaults(["))
        #expect(source.hasPrefix(FlagsCheck.generatedMarker))
    }

    @Test func stringsWithQuotesNewlinesAndControlCharactersAreEscaped() throws {
        let file = FlagsFile(flags: [
            FlagDefinition(key: "text", type: .string, defaultValue: "say \"hi\"\\\n\u{1}", description: "two\nlines")
        ])
        let source = try SwiftGenerator().generate(file)
        #expect(source.contains(#"RemoteKey("text", default: "say \"hi\"\\\n\u{1}", description: "two\nlines")"#))
        #expect(source.contains("    /// two\n    /// lines\n"))
    }
}
