public import VaneCore

/// Writes the Swift API for a flags file: an enum of keys, `RemoteKeys` declarations, an enum per
/// experiment, a type with a typed property per flag, the bundled defaults and the debug-menu catalog.
public struct SwiftGenerator: Sendable {
    /// `public` or `internal`.
    public enum AccessLevel: String, Sendable, CaseIterable {
        /// Visible to other modules.
        case `public`
        /// Visible in the module only.
        case `internal`
    }

    /// The access level of everything generated.
    public var accessLevel: AccessLevel
    /// The name of the type with a property per flag (`Flags`); the key enum is `<typeName>Key`.
    public var typeName: String
    /// The flags file's name, for the header and doc comments.
    public var sourceName: String

    /// Members of the generated type that no flag may take.
    static let reservedMembers: Set<String> = ["reader", "defaults", "catalog", "init", "Key"]

    /// Creates a generator.
    public init(
        accessLevel: AccessLevel = .internal,
        typeName: String = "Flags",
        sourceName: String = "vane-flags.json"
    ) {
        self.accessLevel = accessLevel
        self.typeName = typeName
        self.sourceName = sourceName
    }

    /// The generated source.
    /// - Throws: ``DocumentError`` naming each flag whose key cannot become an identifier, or that
    ///   collides with another flag or with a generated member.
    public func generate(_ file: FlagsFile) throws(DocumentError) -> String {
        var issues: [ValidationIssue] = []
        if !SwiftIdentifier.isValidTypeName(typeName) || typeName.contains(".") {
            issues.append(
                ValidationIssue(
                    .error,
                    at: .root,
                    rule: "type-name",
                    "the type name \"\(typeName)\" is not a Swift identifier"
                )
            )
        }
        var names: [String: String] = [:]
        var plans: [FlagPlan] = []
        for flag in file.flags {
            guard let name = SwiftIdentifier.lowerCamelCase(flag.key) else {
                issues.append(
                    ValidationIssue(
                        .error,
                        at: flag.path,
                        rule: "identifier",
                        "flag \"\(flag.key)\": the key has no letter or digit to make a Swift name from; rename it"
                    )
                )
                continue
            }
            if let other = names[name] {
                issues.append(
                    ValidationIssue(
                        .error,
                        at: flag.path,
                        rule: "identifier",
                        "flag \"\(flag.key)\" and flag \"\(other)\" both become the Swift name `\(name)`; rename one"
                    )
                )
                continue
            }
            if Self.reservedMembers.contains(name) {
                issues.append(
                    ValidationIssue(
                        .error,
                        at: flag.path,
                        rule: "identifier",
                        "flag \"\(flag.key)\" becomes `\(name)`, which the generated type \(typeName) uses itself; rename it"
                    )
                )
                continue
            }
            if let swiftType = flag.swiftType, !SwiftIdentifier.isValidTypeName(swiftType) {
                issues.append(
                    ValidationIssue(
                        .error,
                        at: flag.path.appending("swiftType"),
                        rule: "identifier",
                        "flag \"\(flag.key)\": swiftType \"\(swiftType)\" is not a Swift type name"
                    )
                )
            }
            names[name] = flag.key
            var plan = FlagPlan(flag: flag, name: name, variantType: nil, variantCases: [])
            if case .experiment(let variants) = flag.type {
                plan.variantType = (SwiftIdentifier.upperCamelCase(flag.key) ?? name) + "Variant"
                var caseNames: [String: String] = [:]
                for variant in variants {
                    guard let caseName = SwiftIdentifier.lowerCamelCase(variant) else {
                        issues.append(
                            ValidationIssue(
                                .error,
                                at: flag.path.appending("variants"),
                                rule: "identifier",
                                "flag \"\(flag.key)\": the variant \"\(variant)\" has no letter or digit to make a case name from"
                            )
                        )
                        continue
                    }
                    if let other = caseNames[caseName] {
                        issues.append(
                            ValidationIssue(
                                .error,
                                at: flag.path.appending("variants"),
                                rule: "identifier",
                                "flag \"\(flag.key)\": the variants \"\(variant)\" and \"\(other)\" both become `\(caseName)`"
                            )
                        )
                        continue
                    }
                    caseNames[caseName] = variant
                    plan.variantCases.append((caseName, variant))
                }
            }
            plans.append(plan)
        }
        guard issues.isEmpty else { throw DocumentError(issues: issues) }
        return render(plans)
    }

    /// A flag with the names chosen for it.
    struct FlagPlan {
        var flag: FlagDefinition
        var name: String
        var variantType: String?
        var variantCases: [(name: String, rawValue: String)]
    }

    private var access: String { accessLevel == .public ? "public " : "" }

    private func render(_ plans: [FlagPlan]) -> String {
        var out = """
            // Generated by `vane generate` from \(sourceName). Do not edit: change the flags file and build again.
            // swift-format-ignore-file

            import Vane

            /// The keys of the flags in \(sourceName).
            \(access)enum \(typeName)Key: String, CaseIterable, Sendable {

            """
        for plan in plans {
            out += docComment(plan.flag.description, indent: "    ")
            let name = SwiftIdentifier.escaped(plan.name)
            out += plan.name == plan.flag.key ? "    case \(name)\n" : "    case \(name) = \(literal(plan.flag.key))\n"
        }
        out += "}\n"
        for plan in plans {
            guard let variantType = plan.variantType else { continue }
            out += "\n/// The variants of the experiment `\(plan.flag.key)`.\n"
            out += "\(access)enum \(variantType): String, CaseIterable, Sendable {\n"
            for (caseName, rawValue) in plan.variantCases {
                let escaped = SwiftIdentifier.escaped(caseName)
                out += caseName == rawValue ? "    case \(escaped)\n" : "    case \(escaped) = \(literal(rawValue))\n"
            }
            out += "}\n"
        }
        out += "\nextension RemoteKeys {\n"
        for plan in plans where declaration(plan) != nil {
            out += docComment(plan.flag.description, indent: "    ")
            out += "    \(access)static let \(SwiftIdentifier.escaped(plan.name)) = \(declaration(plan) ?? "")\n"
        }
        out += "}\n\n"
        out += """
            /// Typed access to the flags in \(sourceName): `\(typeName)(client).\(plans.first.map { $0.name } ?? "flag")`.
            \(access)struct \(typeName): Sendable {
                /// Where values are read: a `VaneClient`, a `RemoteConfigSnapshot` or a test double.
                \(access)let reader: any RemoteConfigReader

                /// Reads flags from `reader`.
                \(access)init(_ reader: any RemoteConfigReader) {
                    self.reader = reader
                }

            """
        for plan in plans {
            out += "\n" + docComment(plan.flag.description, indent: "    ")
            out +=
                "    \(access)var \(SwiftIdentifier.escaped(plan.name)): \(propertyType(plan)) { \(propertyBody(plan)) }\n"
        }
        out += """

                /// Every flag's default, to bundle with the client (`VaneClient.Configuration.defaults`).
                \(access)static let defaults = InAppDefaults([

            """
        for plan in plans {
            guard let value = plan.flag.defaultValue else { continue }
            let description = plan.flag.description.map { ", description: \(literal($0))" } ?? ""
            out +=
                "        InAppDefaults.Entry(key: \(literal(plan.flag.key)), value: CoercedValue(\(literal(value)))\(description)),\n"
        }
        out += """
                ])

                /// Every flag, for the debug menu (`VaneClient.Configuration.keys`).
                \(access)static let catalog: [KeyDescriptor] = [

            """
        for plan in plans {
            if declaration(plan) != nil {
                out += "        RemoteKeys.\(SwiftIdentifier.escaped(plan.name)).descriptor,\n"
            } else {
                out += "        \(descriptor(plan)),\n"
            }
        }
        out += "    ]\n}\n"
        return out
    }

    /// The `RemoteKeys` declaration, or nil for JSON flags (read with `decode`).
    private func declaration(_ plan: FlagPlan) -> String? {
        let flag = plan.flag
        let value = flag.defaultValue ?? ""
        let details = detailArguments(flag)
        switch flag.type {
        case .bool:
            return "FeatureFlag(\(literal(flag.key)), default: \(value == "true" ? "true" : "false")\(details))"
        case .int:
            return "RemoteKey(\(literal(flag.key)), default: \(ValueCoercion.int(value) ?? 0)\(details))"
        case .double:
            return "RemoteKey(\(literal(flag.key)), default: \(doubleLiteral(value))\(details))"
        case .string:
            let allowed =
                flag.allowedValues.isEmpty
                ? "" : ", allowedValues: [\(flag.allowedValues.map(literal).joined(separator: ", "))]"
            return "RemoteKey(\(literal(flag.key)), default: \(literal(value))\(allowed)\(details))"
        case .experiment:
            let variant = plan.variantCases.first { $0.rawValue == value }?.name ?? plan.variantCases.first?.name ?? ""
            return
                "RemoteKey(experiment: \(literal(flag.key)), default: \(plan.variantType ?? "").\(SwiftIdentifier.escaped(variant))\(details))"
        case .json:
            return nil
        }
    }

    private func detailArguments(_ flag: FlagDefinition) -> String {
        var parts: [String] = []
        if let title = flag.title { parts.append("title: \(literal(title))") }
        if let description = flag.description { parts.append("description: \(literal(description))") }
        if let category = flag.category { parts.append("category: \(literal(category))") }
        if flag.realtime { parts.append("realtime: true") }
        return parts.isEmpty ? "" : ", " + parts.joined(separator: ", ")
    }

    private func descriptor(_ plan: FlagPlan) -> String {
        let flag = plan.flag
        var parts = [
            "name: \(literal(flag.key))", "kind: .json", "typeName: \(literal(flag.swiftType ?? "JSON"))",
            "defaultValue: \(literal(flag.defaultValue ?? ""))",
        ]
        if let title = flag.title { parts.append("title: \(literal(title))") }
        if let description = flag.description { parts.append("description: \(literal(description))") }
        if let category = flag.category { parts.append("category: \(literal(category))") }
        if flag.realtime { parts.append("realtime: true") }
        return "KeyDescriptor(" + parts.joined(separator: ", ") + ")"
    }

    private func propertyType(_ plan: FlagPlan) -> String {
        switch plan.flag.type {
        case .bool: return "Bool"
        case .int: return "Int"
        case .double: return "Double"
        case .string: return "String"
        case .experiment: return plan.variantType ?? "String"
        case .json: return plan.flag.swiftType.map { "\($0)?" } ?? "String"
        }
    }

    private func propertyBody(_ plan: FlagPlan) -> String {
        guard case .json = plan.flag.type else { return "reader[RemoteKeys.\(SwiftIdentifier.escaped(plan.name))]" }
        if let swiftType = plan.flag.swiftType {
            return "reader.decode(\(swiftType).self, forKey: \(literal(plan.flag.key)))"
        }
        return "reader.string(forKey: \(literal(plan.flag.key)), default: \(literal(plan.flag.defaultValue ?? "")))"
    }

    private func doubleLiteral(_ text: String) -> String {
        let value = ValueCoercion.double(text) ?? 0
        let written = JSONNumber(value).text
        return written.contains(".") || written.contains("e") || written.contains("E") ? written : written + ".0"
    }

    private func docComment(_ text: String?, indent: String) -> String {
        guard let text, !text.isEmpty else { return "" }
        return text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { "\(indent)/// \($0)".trimmingTrailingSpaces() + "\n" }
            .joined()
    }

    /// A Swift string literal.
    func literal(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
