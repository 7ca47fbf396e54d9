public import VaneCore

extension ConfigTemplate {
    /// Checks the template and returns every problem at once, each with its JSON path; empty
    /// when it is fine. A template with any ``ValidationIssue/Severity/error`` must not be published.
    ///
    /// Checked: condition names (empty, duplicate) and expressions (syntax, with the column);
    /// conditional values naming unknown conditions; parameter keys (`^[A-Za-z_][A-Za-z0-9_]*$`,
    /// length, duplicates across groups); values against `valueType` (BOOLEAN, NUMBER, JSON) and
    /// against `allowedValues`; Firebase's limits; values that look like credentials; conditions no
    /// parameter uses; and conditional values an earlier condition shadows (``ShadowedValue``).
    public func validate(options: ValidationOptions = .default) -> [ValidationIssue] {
        ParsedTemplate(self).validate(options: options)
    }
}

extension ParsedTemplate {
    /// Checks the template; the same issues as ``ConfigTemplate/validate(options:)``, which calls
    /// this.
    public func validate(options: ValidationOptions = .default) -> [ValidationIssue] {
        var validator = TemplateValidator(parsed: self, options: options)
        validator.run()
        return validator.issues
    }
}

/// The validation rules, one function per concern.
struct TemplateValidator {
    let parsed: ParsedTemplate
    let options: ValidationOptions
    var issues: [ValidationIssue] = []
    var conditionNames: Set<String> = []
    var valueBytes = 0

    init(parsed: ParsedTemplate, options: ValidationOptions) {
        self.parsed = parsed
        self.options = options
    }

    var template: ConfigTemplate { parsed.template }

    mutating func error(_ path: JSONPath, _ rule: String, _ message: String) {
        issues.append(ValidationIssue(.error, at: path, rule: rule, message))
    }

    mutating func warning(_ path: JSONPath, _ rule: String, _ message: String) {
        issues.append(ValidationIssue(.warning, at: path, rule: rule, message))
    }

    mutating func run() {
        checkConditions()
        checkParameters()
        checkVersion()
        checkPriorities()
    }

    /// Conditions no parameter uses, and conditional values an earlier condition shadows.
    mutating func checkPriorities() {
        let conditionsPath = JSONPath.root.appending("conditions")
        let unused = Set(parsed.unusedConditions())
        // An empty name is an error already.
        for (index, condition) in template.conditions.enumerated()
        where !condition.name.isEmpty && unused.contains(condition.name) {
            warning(
                conditionsPath.appending(index).appending("name"),
                "unused-condition",
                "no parameter has a value for the condition \"\(condition.name)\" any more; "
                    + "delete it, or give a parameter a value for it"
            )
        }
        let shadowed = parsed.shadowedValues()
        guard !shadowed.isEmpty else { return }
        var paths: [String: JSONPath] = [:]
        for parameter in template.parameters {
            paths[parameter.key] = JSONPath.root.appending("parameters").appending(parameter.key)
        }
        for group in template.parameterGroups {
            for parameter in group.parameters where paths[parameter.key] == nil {
                paths[parameter.key] = JSONPath.root.appending("parameterGroups").appending(group.name)
                    .appending("parameters").appending(parameter.key)
            }
        }
        for finding in shadowed {
            guard let path = paths[finding.parameterKey] else { continue }
            warning(
                path.appending("conditionalValues").appending(finding.condition),
                "shadowed-value",
                finding.message
            )
        }
    }

    mutating func checkConditions() {
        let conditionsPath = JSONPath.root.appending("conditions")
        if template.conditions.count > options.maximumConditions {
            error(
                conditionsPath,
                "limit",
                "\(template.conditions.count) conditions; the limit is \(options.maximumConditions)"
            )
        }
        var firstIndex: [String: Int] = [:]
        for (index, condition) in template.conditions.enumerated() {
            let path = conditionsPath.appending(index)
            if condition.name.isEmpty {
                error(path.appending("name"), "condition-name", "the condition name is empty; give it a unique name")
            } else if let first = firstIndex[condition.name] {
                error(
                    path.appending("name"),
                    "condition-name",
                    "duplicate condition name \"\(condition.name)\" (also conditions[\(first)]); names must be unique"
                )
            } else {
                firstIndex[condition.name] = index
            }
            conditionNames.insert(condition.name)
            let parsedCondition = parsed.conditions[index]
            if let syntaxError = parsedCondition.syntaxError {
                error(path.appending("expression"), "condition-syntax", syntaxError.description)
            }
            for issue in parsedCondition.structuredIssues {
                warning(path.appending("condition").appending(issue.path), "condition-structure", issue.message)
            }
            let source: String
            if case .structured = condition.source { source = "condition" } else { source = "expression" }
            for pattern in parsedCondition.expression?.matchesPatterns ?? []
            where CatastrophicBacktracking.isLikely(in: pattern) {
                warning(
                    path.appending(source),
                    "slow-pattern",
                    "the pattern '\(pattern)' repeats a repetition, which can take exponential time on some inputs; "
                        + "each match is stopped after 10 ms and then counts as no match. Rewrite it without nesting "
                        + "(e.g. '(a+)+' as 'a+')"
                )
            }
        }
    }

    mutating func checkParameters() {
        var seenKeys: [String: JSONPath] = [:]
        let groupNames = Set(template.parameterGroups.map(\.name))
        var count = 0
        let parametersPath = JSONPath.root.appending("parameters")
        for parameter in template.parameters {
            check(parameter, at: parametersPath.appending(parameter.key), seenKeys: &seenKeys, groupNames: groupNames)
            count += 1
        }
        for group in template.parameterGroups {
            let groupPath = JSONPath.root.appending("parameterGroups").appending(group.name)
            if Self.exceeds(group.name, options.maximumDescription) {
                error(
                    groupPath,
                    "group-name",
                    "the group name has \(group.name.count) characters; the limit is \(options.maximumDescription)"
                )
            }
            if let description = group.description, Self.exceeds(description, options.maximumDescription) {
                error(
                    groupPath.appending("description"),
                    "limit",
                    "the description has \(description.count) characters; the limit is \(options.maximumDescription)"
                )
            }
            for parameter in group.parameters {
                check(
                    parameter,
                    at: groupPath.appending("parameters").appending(parameter.key),
                    seenKeys: &seenKeys,
                    groupNames: groupNames
                )
                count += 1
            }
        }
        if count > options.maximumParameters {
            error(parametersPath, "limit", "\(count) parameters; the limit is \(options.maximumParameters)")
        }
        // `valueBytes` is never less than the characters: count characters only
        // when the bytes are over the limit.
        if valueBytes > options.maximumValueCharacters {
            let characters = valueCharacterCount()
            if characters > options.maximumValueCharacters {
                error(
                    parametersPath,
                    "limit",
                    "the values have \(characters) characters in all; the limit is \(options.maximumValueCharacters)"
                )
            }
        }
    }

    mutating func check(
        _ parameter: TemplateParameter,
        at path: JSONPath,
        seenKeys: inout [String: JSONPath],
        groupNames: Set<String>
    ) {
        checkKey(parameter.key, at: path)
        if let first = seenKeys[parameter.key] {
            error(
                path,
                "duplicate-key",
                "the key \"\(parameter.key)\" is also defined at \(first); a key may appear once"
            )
        } else {
            seenKeys[parameter.key] = path
        }
        if groupNames.contains(parameter.key) {
            error(
                path,
                "duplicate-key",
                "the key \"\(parameter.key)\" is also the name of a parameter group; rename one"
            )
        }
        if let description = parameter.description, Self.exceeds(description, options.maximumDescription) {
            error(
                path.appending("description"),
                "limit",
                "the description has \(description.count) characters; the limit is \(options.maximumDescription)"
            )
        }
        let valueType = parameter.valueType ?? .string
        if !Self.knownTypes.contains(valueType) {
            warning(
                path.appending("valueType"),
                "value-type",
                "unknown valueType \"\(valueType.rawValue)\"; expected STRING, BOOLEAN, NUMBER or JSON (values are not checked)"
            )
        }
        if parameter.defaultValue == nil && parameter.conditionalValues.isEmpty {
            warning(path, "no-value", "the parameter has no default and no conditional values, so it has no effect")
        }
        if let defaultValue = parameter.defaultValue {
            if case .managed(let kind) = defaultValue.kind {
                warning(
                    path.appending("defaultValue"),
                    "managed-value",
                    "a default value must be static; \(kind) is evaluated as useInAppDefault"
                )
            }
            check(defaultValue, of: parameter, type: valueType, at: path.appending("defaultValue"))
        }
        for conditional in parameter.conditionalValues {
            let valuePath = path.appending("conditionalValues").appending(conditional.conditionName)
            if !conditionNames.contains(conditional.conditionName) {
                error(
                    valuePath,
                    "unknown-condition",
                    "no condition is named \"\(conditional.conditionName)\"; add it to conditions or remove this value"
                )
            }
            check(conditional.value, of: parameter, type: valueType, at: valuePath)
        }
    }

    /// Whether `text` has more than `limit` characters; most text has far fewer bytes than any
    /// limit, and counting bytes is cheaper than counting characters.
    static func exceeds(_ text: String, _ limit: Int) -> Bool {
        text.utf8.count > limit && text.count > limit
    }

    /// The characters of every static value, as the value limit counts them.
    func valueCharacterCount() -> Int {
        var count = 0
        for parameter in template.allParameters {
            for value in [parameter.defaultValue].compactMap({ $0 }) + parameter.conditionalValues.map(\.value) {
                if case .value(let string) = value.kind { count += string.count }
            }
        }
        return count
    }

    /// The value types whose values are checked.
    static let knownTypes: Set<ParameterValueType> = [.string, .boolean, .number, .json, .unspecified]

    mutating func checkKey(_ key: String, at path: JSONPath) {
        if key.isEmpty {
            error(path, "key", "the parameter key is empty")
            return
        }
        if Self.exceeds(key, options.maximumKeyLength) {
            error(path, "key", "the key has \(key.count) characters; the limit is \(options.maximumKeyLength)")
        }
        let utf8 = key.utf8
        let isLetter = { (byte: UInt8) in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || byte == UInt8(ascii: "_")
        }
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        if let first = utf8.first, !isLetter(first) || !utf8.allSatisfy({ isLetter($0) || isDigit($0) }) {
            error(
                path,
                "key",
                "the key \"\(key)\" must start with a letter or '_' and hold only letters, digits and '_' (^[A-Za-z_][A-Za-z0-9_]*$)"
            )
        }
    }

    mutating func check(
        _ value: ParameterValue,
        of parameter: TemplateParameter,
        type: ParameterValueType,
        at path: JSONPath
    ) {
        guard case .value(let string) = value.kind else { return }
        // Built only for a problem: most values have none.
        var valuePath: JSONPath { path.appending("value") }
        valueBytes += string.utf8.count
        switch type {
        case .boolean:
            let lower = string.lowercased()
            if lower != "true" && lower != "false" {
                error(valuePath, "value-type", "\(Self.quote(string)) is not a BOOLEAN; write \"true\" or \"false\"")
            }
        case .number:
            if !Self.isFirebaseNumber(string) {
                error(
                    valuePath,
                    "value-type",
                    "\(Self.quote(string)) is not a NUMBER; write a decimal such as \"42\" or \"-0.5\" (no exponent, '+' or trailing '.')"
                )
            }
        case .json:
            do {
                _ = try JSONValue.parse(string)
            } catch {
                self.error(valuePath, "value-type", "the value is not valid JSON: \(error.description)")
            }
        default:
            break
        }
        if let allowed = parameter.metadata?.allowedValues, !allowed.isEmpty, !allowed.contains(string) {
            error(
                valuePath,
                "allowed-values",
                "\(Self.quote(string)) is not one of the allowed values \(allowed.map(Self.quote).joined(separator: ", "))"
            )
        }
        if !options.allowSecrets, parameter.metadata?.allowSecrets != true,
            let kind = SecretScanner.credentialKind(in: string)
        {
            error(
                valuePath,
                "secret",
                "the value looks like \(kind); every client can read remote config values. Keep secrets on your server, "
                    + "or set \"vane\": {\"allowSecrets\": true} on this parameter if the value is meant to be public"
            )
        }
    }

    mutating func checkVersion() {
        if let description = template.version?.description, description.count > options.maximumVersionDescription {
            error(
                JSONPath.root.appending("version").appending("description"),
                "limit",
                "the version description has \(description.count) characters; the limit is \(options.maximumVersionDescription)"
            )
        }
    }

    /// Firebase's NUMBER rule: `^-?(\d*\.)?\d+$`.
    static func isFirebaseNumber(_ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        guard let last = bytes.last, last >= UInt8(ascii: "0"), last <= UInt8(ascii: "9") else { return false }
        var dots = 0
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                dots += 1
            } else if byte < UInt8(ascii: "0") || byte > UInt8(ascii: "9") {
                return false
            }
        }
        return dots <= 1
    }

    /// A value quoted for a message, shortened when long.
    static func quote(_ text: String) -> String {
        let shown = text.count > 40 ? String(text.prefix(37)) + "…" : text
        return "\"\(shown)\""
    }
}
