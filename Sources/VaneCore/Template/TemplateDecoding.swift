import Foundation

extension ConfigTemplate {
    /// Reads a template from JSON bytes: a Firebase client or server template, or a Vane template.
    ///
    /// - Throws: ``DocumentError`` listing every malformed field with its JSON path, or
    ///   the line and column where the JSON itself breaks.
    public init(data: some Collection<UInt8>, limits: JSONParseLimits = .default) throws(DocumentError) {
        try self.init(json: try DocumentError.parse(data, limits: limits))
    }

    /// Reads a template from a parsed JSON document.
    ///
    /// - Throws: ``DocumentError`` listing every field of the wrong type, with its path.
    public init(json: JSONValue) throws(DocumentError) {
        var reader = JSONFieldReader()
        guard let root = reader.object(json, at: .root) else {
            throw DocumentError(issues: [
                ValidationIssue(
                    .error,
                    at: .root,
                    rule: "type",
                    "expected a template object, found \(json.kindDescription)"
                )
            ])
        }
        self = TemplateDecoder.template(root, reader: &reader)
        if !reader.issues.isEmpty { throw DocumentError(issues: reader.issues) }
    }
}

/// Turns JSON objects into template values, recording type errors in the reader.
enum TemplateDecoder {
    static func template(_ root: JSONObject, reader: inout JSONFieldReader) -> ConfigTemplate {
        var template = ConfigTemplate()
        let conditionsPath = JSONPath.root.appending("conditions")
        for (index, element) in (reader.array(root["conditions"], at: conditionsPath) ?? []).enumerated() {
            let path = conditionsPath.appending(index)
            guard let object = reader.object(element, at: path) else {
                if element == .null { reader.mismatch(element, "a condition object", at: path) }
                continue
            }
            if let condition = condition(object, at: path, reader: &reader) { template.conditions.append(condition) }
        }
        template.parameters = parameters(root["parameters"], at: JSONPath.root.appending("parameters"), reader: &reader)
        let groupsPath = JSONPath.root.appending("parameterGroups")
        for member in reader.object(root["parameterGroups"], at: groupsPath) ?? JSONObject() {
            let path = groupsPath.appending(member.key)
            guard let object = reader.object(member.value, at: path) else { continue }
            template.parameterGroups.append(
                ParameterGroup(
                    name: member.key,
                    description: reader.string(object["description"], at: path.appending("description")),
                    parameters: parameters(object["parameters"], at: path.appending("parameters"), reader: &reader),
                    unknownFields: reader.unknownMembers(of: object, known: ["description", "parameters"])
                )
            )
        }
        if let object = reader.object(root["version"], at: JSONPath.root.appending("version")) {
            template.version = version(object, at: JSONPath.root.appending("version"), reader: &reader)
        }
        let settingsPath = JSONPath.root.appending("vane")
        if let object = reader.object(root["vane"], at: settingsPath) {
            template.settings = TemplateSettings.read(object, at: settingsPath, reader: &reader)
        }
        template.unknownFields = reader.unknownMembers(
            of: root,
            known: ["conditions", "parameters", "parameterGroups", "version", "vane"]
        )
        return template
    }

    static func condition(_ object: JSONObject, at path: JSONPath, reader: inout JSONFieldReader) -> TemplateCondition?
    {
        let name = reader.string(object["name"], at: path.appending("name"))
        if name == nil, object["name"] == nil {
            reader.fail(path.appending("name"), "a condition needs a name", rule: "required")
        }
        let source: TemplateCondition.Source
        if let expression = object["expression"] {
            guard let text = reader.string(expression, at: path.appending("expression")) else { return nil }
            source = .expression(text)
        } else if let structured = object["condition"] {
            guard reader.object(structured, at: path.appending("condition")) != nil else { return nil }
            source = .structured(structured)
        } else {
            reader.fail(
                path,
                "a condition needs an \"expression\" (client template) or a \"condition\" tree (server template)",
                rule: "required"
            )
            return nil
        }
        return TemplateCondition(
            name: name ?? "",
            source: source,
            tagColor: reader.string(object["tagColor"], at: path.appending("tagColor")),
            unknownFields: reader.unknownMembers(of: object, known: ["name", "expression", "condition", "tagColor"])
        )
    }

    static func parameters(_ value: JSONValue?, at path: JSONPath, reader: inout JSONFieldReader) -> [TemplateParameter]
    {
        var result: [TemplateParameter] = []
        for member in reader.object(value, at: path) ?? JSONObject() {
            let memberPath = path.appending(member.key)
            guard let object = reader.object(member.value, at: memberPath) else {
                if member.value == .null { reader.mismatch(member.value, "a parameter object", at: memberPath) }
                continue
            }
            result.append(parameter(key: member.key, object, at: memberPath, reader: &reader))
        }
        return result
    }

    static func parameter(
        key: String,
        _ object: JSONObject,
        at path: JSONPath,
        reader: inout JSONFieldReader
    )
        -> TemplateParameter
    {
        var parameter = TemplateParameter(key: key)
        if object["defaultValue"] != nil {
            parameter.defaultValue = value(object["defaultValue"], at: path.appending("defaultValue"), reader: &reader)
        }
        let conditionalPath = path.appending("conditionalValues")
        for member in reader.object(object["conditionalValues"], at: conditionalPath) ?? JSONObject() {
            if let value = value(member.value, at: conditionalPath.appending(member.key), reader: &reader) {
                parameter.conditionalValues.append(ConditionalValue(conditionName: member.key, value: value))
            }
        }
        parameter.description = reader.string(object["description"], at: path.appending("description"))
        parameter.valueType = reader.string(object["valueType"], at: path.appending("valueType")).map(
            ParameterValueType.init
        )
        if let metadata = reader.object(object["vane"], at: path.appending("vane")) {
            parameter.metadata = Self.metadata(metadata, at: path.appending("vane"), reader: &reader)
        }
        parameter.unknownFields = reader.unknownMembers(
            of: object,
            known: ["defaultValue", "conditionalValues", "description", "valueType", "vane"]
        )
        return parameter
    }

    static func value(_ json: JSONValue?, at path: JSONPath, reader: inout JSONFieldReader) -> ParameterValue? {
        guard let json else { return nil }
        guard let object = reader.object(json, at: path) else {
            if json == .null { reader.mismatch(json, "a value object such as {\"value\": \"…\"}", at: path) }
            return nil
        }
        if let value = object["value"], value.stringValue == nil {
            // Values are always strings, also for numbers and Booleans: say how to write it.
            let suggestion: String
            switch value {
            case .number(let number): suggestion = " (write \"\(number.text)\")"
            case .bool(let bool): suggestion = " (write \"\(bool)\")"
            case .object, .array: suggestion = " (a JSON value goes in as text: \"{…}\")"
            default: suggestion = ""
            }
            reader.fail(path.appending("value"), "expected a string, found \(value.kindDescription)\(suggestion)")
            return nil
        }
        if let flag = object["useInAppDefault"], flag != .bool(true) {
            reader.fail(
                path.appending("useInAppDefault"),
                "expected true, found \(flag.serialized()); leave it out for false"
            )
            return nil
        }
        if object.isEmpty {
            reader.fail(
                path,
                "an empty value object; expected {\"value\": \"…\"} or {\"useInAppDefault\": true}",
                rule: "required"
            )
            return nil
        }
        return ParameterValue(json: object)
    }

    static func metadata(_ object: JSONObject, at path: JSONPath, reader: inout JSONFieldReader) -> ParameterMetadata {
        ParameterMetadata(
            title: reader.string(object["title"], at: path.appending("title")),
            category: reader.string(object["category"], at: path.appending("category")),
            allowedValues: reader.stringList(object["allowedValues"], at: path.appending("allowedValues")) ?? [],
            realtime: reader.bool(object["realtime"], at: path.appending("realtime")) ?? false,
            allowSecrets: reader.bool(object["allowSecrets"], at: path.appending("allowSecrets")) ?? false,
            unknownFields: reader.unknownMembers(
                of: object,
                known: ["title", "category", "allowedValues", "realtime", "allowSecrets"]
            )
        )
    }

    static func version(_ object: JSONObject, at path: JSONPath, reader: inout JSONFieldReader) -> TemplateVersion {
        var user: TemplateUser?
        if let userObject = reader.object(object["updateUser"], at: path.appending("updateUser")) {
            let userPath = path.appending("updateUser")
            user = TemplateUser(
                email: reader.string(userObject["email"], at: userPath.appending("email")),
                name: reader.string(userObject["name"], at: userPath.appending("name")),
                imageUrl: reader.string(userObject["imageUrl"], at: userPath.appending("imageUrl")),
                unknownFields: reader.unknownMembers(of: userObject, known: ["email", "name", "imageUrl"])
            )
        }
        return TemplateVersion(
            versionNumber: reader.integerString(object["versionNumber"], at: path.appending("versionNumber")),
            updateTime: reader.string(object["updateTime"], at: path.appending("updateTime")),
            updateUser: user,
            description: reader.string(object["description"], at: path.appending("description")),
            updateOrigin: reader.string(object["updateOrigin"], at: path.appending("updateOrigin")).map(
                UpdateOrigin.init
            ),
            updateType: reader.string(object["updateType"], at: path.appending("updateType")).map(UpdateType.init),
            rollbackSource: reader.integerString(object["rollbackSource"], at: path.appending("rollbackSource")),
            isLegacy: reader.bool(object["isLegacy"], at: path.appending("isLegacy")),
            unknownFields: reader.unknownMembers(
                of: object,
                known: [
                    "versionNumber", "updateTime", "updateUser", "description", "updateOrigin", "updateType",
                    "rollbackSource", "isLegacy",
                ]
            )
        )
    }
}
