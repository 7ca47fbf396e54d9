public import VaneCore

/// The flags an app declares, read from a flags file.
///
/// Three formats are read, told apart by their shape:
/// - Vane's flags file, `vane-flags.json`: `{"flags": [{"key", "type", "default", "description",
///   "title", "category", "allowedValues", "realtime", "variants", "swiftType"}]}` (or just the list);
/// - the hand-written list teams keep today: `[{"name", "description", "value"}]`, the type taken
///   from the JSON value;
/// - a Vane or Firebase template (`{"parameters": …}`), the type taken from each `valueType`.
public struct FlagsFile: Sendable, Hashable {
    /// The flags, in file order.
    public var flags: [FlagDefinition]

    /// Creates a flags file from definitions.
    public init(flags: [FlagDefinition]) {
        self.flags = flags
    }

    /// The types a Vane flags file may name.
    public static let typeNames = ["bool", "int", "double", "string", "json", "experiment"]

    /// Reads a flags file in any of the three formats.
    /// - Throws: ``DocumentError`` listing every problem with its JSON path and flag name.
    public init(data: some Collection<UInt8>) throws(DocumentError) {
        try self.init(json: try DocumentError.parse(data))
    }

    /// Reads a flags file from parsed JSON.
    public init(json: JSONValue) throws(DocumentError) {
        var reader = FlagsFileReader()
        switch json {
        case .object(let object) where object["flags"] != nil:
            guard case .array(let entries)? = object["flags"] else {
                throw DocumentError(issues: [
                    ValidationIssue(
                        .error,
                        at: JSONPath.root.appending("flags"),
                        rule: "type",
                        "expected a list of flags"
                    )
                ])
            }
            reader.readVaneFlags(entries, at: JSONPath.root.appending("flags"))
        case .object(let object) where object["parameters"] != nil || object["parameterGroups"] != nil:
            reader.readTemplate(json)
        case .array(let entries):
            let isSeedList = entries.contains { $0.objectValue?["name"] != nil && $0.objectValue?["key"] == nil }
            if isSeedList {
                reader.readSeedList(entries)
            } else {
                reader.readVaneFlags(entries, at: .root)
            }
        default:
            reader.issues.append(
                ValidationIssue(
                    .error,
                    at: .root,
                    rule: "type",
                    "expected {\"flags\": [...]}, a list of {\"name\", \"value\"} entries or a template, found \(json.kindDescription)"
                )
            )
        }
        reader.checkDuplicates()
        guard reader.issues.isEmpty else { throw DocumentError(issues: reader.issues) }
        self.init(flags: reader.flags)
    }
}

/// Reads flag entries, collecting every problem.
struct FlagsFileReader {
    var flags: [FlagDefinition] = []
    var issues: [ValidationIssue] = []

    mutating func fail(_ path: JSONPath, _ rule: String, _ message: String) {
        issues.append(ValidationIssue(.error, at: path, rule: rule, message))
    }

    // MARK: Vane flags file

    mutating func readVaneFlags(_ entries: [JSONValue], at base: JSONPath) {
        for (index, entry) in entries.enumerated() {
            let path = base.appending(index)
            guard case .object(let object) = entry else {
                fail(
                    path,
                    "type",
                    "expected a flag object {\"key\", \"type\", \"default\"}, found \(entry.kindDescription)"
                )
                continue
            }
            guard case .string(let key)? = object["key"], !key.isEmpty else {
                fail(path.appending("key"), "required", "every flag needs a \"key\": the name the server uses")
                continue
            }
            let label = "flag \"\(key)\""
            guard case .string(let typeName)? = object["type"] else {
                fail(
                    path.appending("type"),
                    "required",
                    "\(label) needs a \"type\": one of \(FlagsFile.typeNames.joined(separator: ", "))"
                )
                continue
            }
            var definition = FlagDefinition(key: key, type: .string, defaultValue: nil, path: path)
            definition.description = string(object, "description", label, path)
            definition.title = string(object, "title", label, path)
            definition.category = string(object, "category", label, path)
            definition.swiftType = string(object, "swiftType", label, path)
            definition.allowedValues = strings(object, "allowedValues", label, path) ?? []
            if let realtime = object["realtime"] {
                if case .bool(let value) = realtime {
                    definition.realtime = value
                } else {
                    fail(path.appending("realtime"), "type", "\(label): \"realtime\" must be true or false")
                }
            }
            let defaultPath = path.appending("default")
            let value = object["default"]
            switch typeName {
            case "bool":
                definition.type = .bool
                if case .bool(let bool)? = value {
                    definition.defaultValue = bool ? "true" : "false"
                } else {
                    fail(defaultPath, "default", "\(label) is a bool: its default must be true or false\(found(value))")
                }
            case "int":
                definition.type = .int
                if case .number(let number)? = value, number.intValue != nil {
                    definition.defaultValue = number.text
                } else {
                    fail(
                        defaultPath,
                        "default",
                        "\(label) is an int: its default must be a whole number\(found(value))"
                    )
                }
            case "double":
                definition.type = .double
                if case .number(let number)? = value {
                    definition.defaultValue = number.text
                } else {
                    fail(defaultPath, "default", "\(label) is a double: its default must be a number\(found(value))")
                }
            case "string":
                definition.type = .string
                if case .string(let text)? = value {
                    definition.defaultValue = text
                    if !definition.allowedValues.isEmpty, !definition.allowedValues.contains(text) {
                        fail(
                            defaultPath,
                            "default",
                            "\(label): the default \"\(text)\" is not one of its allowedValues"
                        )
                    }
                } else {
                    fail(defaultPath, "default", "\(label) is a string: its default must be a string\(found(value))")
                }
            case "json":
                definition.type = .json
                switch value {
                case .object?, .array?: definition.defaultValue = value?.serialized()
                default:
                    fail(
                        defaultPath,
                        "default",
                        "\(label) is json: its default must be an object or a list\(found(value))"
                    )
                }
            case "experiment":
                guard let variants = strings(object, "variants", label, path), !variants.isEmpty else {
                    fail(
                        path.appending("variants"),
                        "required",
                        "\(label) is an experiment: list its variants, for example [\"control\", \"treatment\"]"
                    )
                    continue
                }
                if Set(variants).count != variants.count || variants.contains("") {
                    fail(path.appending("variants"), "variants", "\(label): variants must be non-empty and distinct")
                }
                definition.type = .experiment(variants: variants)
                definition.allowedValues = variants
                switch value {
                case nil: definition.defaultValue = variants[0]
                case .string(let variant)? where variants.contains(variant): definition.defaultValue = variant
                default:
                    fail(
                        defaultPath,
                        "default",
                        "\(label): the default must be one of its variants (\(variants.joined(separator: ", ")))\(found(value))"
                    )
                }
            default:
                fail(
                    path.appending("type"),
                    "type",
                    "\(label) has the unknown type \"\(typeName)\"; expected one of \(FlagsFile.typeNames.joined(separator: ", "))"
                )
                continue
            }
            flags.append(definition)
        }
    }

    // MARK: Hand-written list

    mutating func readSeedList(_ entries: [JSONValue]) {
        do {
            let defaults = try InAppDefaults(json: .array(entries))
            for (index, entry) in entries.enumerated() {
                guard let object = entry.objectValue, case .string(let name)? = object["name"],
                    let value = object["value"], let text = defaults[name]?.stringValue
                else { continue }
                let type: FlagType
                switch value {
                case .bool: type = .bool
                case .number(let number): type = number.intValue != nil && !number.text.contains(".") ? .int : .double
                case .array, .object: type = .json
                default: type = .string
                }
                flags.append(
                    FlagDefinition(
                        key: name,
                        type: type,
                        defaultValue: text,
                        description: object["description"]?.stringValue,
                        path: JSONPath.root.appending(index)
                    )
                )
            }
        } catch {
            issues += error.issues
        }
    }

    // MARK: Template

    mutating func readTemplate(_ json: JSONValue) {
        let template: ConfigTemplate
        do {
            template = try ConfigTemplate(json: json)
        } catch {
            issues += error.issues
            return
        }
        for parameter in template.allParameters {
            let type: FlagType
            switch parameter.valueType ?? .string {
            case .boolean: type = .bool
            case .number: type = .double
            case .json: type = .json
            default: type = .string
            }
            var text = parameter.defaultValue?.stringValue
            if text == nil {
                // A parameter without an explicit default (useInAppDefault): the type's empty value.
                switch type {
                case .bool: text = "false"
                case .double: text = "0"
                case .json: text = "{}"
                default: text = ""
                }
            }
            var flag = FlagDefinition(
                key: parameter.key,
                type: type,
                defaultValue: text,
                path: JSONPath.root.appending("parameters").appending(parameter.key)
            )
            flag.metadata = parameter.keyMetadata
            flags.append(flag)
        }
    }

    // MARK: Checks

    mutating func checkDuplicates() {
        var seen: [String: JSONPath] = [:]
        for flag in flags {
            if let first = seen[flag.key] {
                fail(flag.path, "duplicate", "flag \"\(flag.key)\" is defined twice (first at \(first))")
            } else {
                seen[flag.key] = flag.path
            }
        }
    }

    mutating func string(_ object: JSONObject, _ name: String, _ label: String, _ path: JSONPath) -> String? {
        switch object[name] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let value?:
            fail(path.appending(name), "type", "\(label): \"\(name)\" must be a string, found \(value.kindDescription)")
            return nil
        }
    }

    mutating func strings(_ object: JSONObject, _ name: String, _ label: String, _ path: JSONPath) -> [String]? {
        guard let value = object[name] else { return nil }
        guard case .array(let elements) = value else {
            fail(path.appending(name), "type", "\(label): \"\(name)\" must be a list of strings")
            return nil
        }
        var strings: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let text) = element else {
                fail(
                    path.appending(name).appending(index),
                    "type",
                    "\(label): \"\(name)\" must be a list of strings, found \(element.kindDescription)"
                )
                continue
            }
            strings.append(text)
        }
        return strings
    }

    func found(_ value: JSONValue?) -> String {
        guard let value else { return ", and it has none" }
        return ", found \(value.kindDescription)"
    }
}
