public import VaneCore

extension ConfigTemplate {
    /// The template as JSON, in Firebase's member order, with Vane's metadata and every unknown
    /// field kept.
    ///
    /// Use ``FirebaseExport`` for a document the Firebase console and APIs accept.
    public func json() -> JSONValue {
        var root = JSONObject()
        if !conditions.isEmpty { root["conditions"] = .array(conditions.map { .object($0.json()) }) }
        root["parameters"] = .object(TemplateEncoder.parameters(parameters))
        if !parameterGroups.isEmpty {
            var groups = JSONObject()
            for group in parameterGroups {
                var object = JSONObject()
                if let description = group.description { object["description"] = .string(description) }
                object["parameters"] = .object(TemplateEncoder.parameters(group.parameters))
                TemplateEncoder.merge(group.unknownFields, into: &object)
                groups[group.name] = .object(object)
            }
            root["parameterGroups"] = .object(groups)
        }
        if let version { root["version"] = .object(version.json()) }
        if !settings.isDefault { root["vane"] = .object(settings.json()) }
        TemplateEncoder.merge(unknownFields, into: &root)
        return .object(root)
    }

    /// The template as JSON text.
    public func serialized(_ formatting: JSONFormatting = .pretty) -> String {
        json().serialized(formatting)
    }
}

extension TemplateCondition {
    /// The condition as a JSON object.
    public func json() -> JSONObject {
        var object: JSONObject = ["name": .string(name)]
        switch source {
        case .expression(let expression): object["expression"] = .string(expression)
        case .structured(let tree): object["condition"] = tree
        }
        if let tagColor { object["tagColor"] = .string(tagColor) }
        TemplateEncoder.merge(unknownFields, into: &object)
        return object
    }
}

extension TemplateParameter {
    /// The parameter as a JSON object (without its key, which is the member name).
    public func json() -> JSONObject {
        var object = JSONObject()
        if let defaultValue { object["defaultValue"] = .object(defaultValue.json) }
        if !conditionalValues.isEmpty {
            var values = JSONObject()
            for conditional in conditionalValues { values[conditional.conditionName] = .object(conditional.value.json) }
            object["conditionalValues"] = .object(values)
        }
        if let description { object["description"] = .string(description) }
        if let valueType { object["valueType"] = .string(valueType.rawValue) }
        if let metadata { object["vane"] = .object(metadata.json()) }
        TemplateEncoder.merge(unknownFields, into: &object)
        return object
    }
}

extension ParameterMetadata {
    /// The metadata as a JSON object; default fields are left out.
    public func json() -> JSONObject {
        var object = JSONObject()
        if let title { object["title"] = .string(title) }
        if let category { object["category"] = .string(category) }
        if !allowedValues.isEmpty { object["allowedValues"] = .array(allowedValues.map(JSONValue.string)) }
        if realtime { object["realtime"] = .bool(true) }
        if allowSecrets { object["allowSecrets"] = .bool(true) }
        TemplateEncoder.merge(unknownFields, into: &object)
        return object
    }
}

extension TemplateVersion {
    /// The version as a JSON object.
    public func json() -> JSONObject {
        var object = JSONObject()
        if let versionNumber { object["versionNumber"] = .string(versionNumber) }
        if let updateTime { object["updateTime"] = .string(updateTime) }
        if let updateUser {
            var user = JSONObject()
            if let email = updateUser.email { user["email"] = .string(email) }
            if let name = updateUser.name { user["name"] = .string(name) }
            if let imageUrl = updateUser.imageUrl { user["imageUrl"] = .string(imageUrl) }
            TemplateEncoder.merge(updateUser.unknownFields, into: &user)
            object["updateUser"] = .object(user)
        }
        if let description { object["description"] = .string(description) }
        if let updateOrigin { object["updateOrigin"] = .string(updateOrigin.rawValue) }
        if let updateType { object["updateType"] = .string(updateType.rawValue) }
        if let rollbackSource { object["rollbackSource"] = .string(rollbackSource) }
        if let isLegacy { object["isLegacy"] = .bool(isLegacy) }
        TemplateEncoder.merge(unknownFields, into: &object)
        return object
    }
}

extension TemplateSettings {
    /// The `vane` object.
    public func json() -> JSONObject {
        var object = JSONObject()
        if clientsMayPinDateTime { object["clientsMayPinDateTime"] = .bool(true) }
        if clientsReceiveDescriptions { object["clientsReceiveDescriptions"] = .bool(true) }
        TemplateEncoder.merge(unknownFields, into: &object)
        return object
    }
}

enum TemplateEncoder {
    static func parameters(_ parameters: [TemplateParameter]) -> JSONObject {
        var object = JSONObject()
        for parameter in parameters where object[parameter.key] == nil {
            object[parameter.key] = .object(parameter.json())
        }
        return object
    }

    /// Unknown fields go last and never replace a field Vane wrote.
    static func merge(_ unknown: JSONObject, into object: inout JSONObject) {
        for member in unknown where object[member.key] == nil { object[member.key] = member.value }
    }
}
