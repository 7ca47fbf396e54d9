import Crypto
import VaneCore

/// A published template ready to serve: compiled once, with everything a response needs
/// precomputed, so serving never touches the database.
public final class ServedTemplate: Sendable {
    /// Which environment.
    public let environment: EnvironmentKey
    /// The version number.
    public let versionNumber: Int64
    /// The compiled template.
    public let compiled: CompiledTemplate
    /// The admin ETag, `etag-{project}-{environment}-{version}`.
    public let etag: String
    /// The template JSON, for `template/compiled`.
    public let templateJSON: String
    /// Per key with Vane metadata or a description: `{"realtime", "title", "category", "allowedValues",
    /// "description"}` for fetch responses.
    public let metadata: [String: JSONValue]
    /// Per key: its declared value type.
    public let valueTypes: [String: ParameterValueType]
    /// Per key: whether any of its conditional values can win (false: the value is static).
    public let hasConditionalValues: Set<String>
    /// Conditions that contain a `percent` rule (their matches are splits, for OFREP).
    public let percentConditions: Set<String>
    /// Per parameter and branch (see ``EvaluationResult/forEachEntry(_:)``): the UTF-8 of
    /// `"key":"value"`, so a fetch response is assembled from ready-made pieces.
    let entryFragments: [[[UInt8]]]
    /// Per parameter: the UTF-8 of `"key":{metadata}`, empty when the key has none.
    let metadataFragments: [[UInt8]]

    /// Compiles a stored version.
    /// - Throws: ``TemplateCompilationError`` for a stored template that no longer compiles.
    public init(_ version: StoredVersion) throws {
        environment = EnvironmentKey(projectId: version.projectId, environmentId: version.environmentId)
        versionNumber = version.number
        compiled = try CompiledTemplate(version.template)
        etag = ServedTemplate.etag(environment, version: version.number)
        templateJSON = version.template.serialized(.compact)
        var metadata: [String: JSONValue] = [:]
        var valueTypes: [String: ParameterValueType] = [:]
        var conditional = Set<String>()
        for parameter in version.template.allParameters {
            var object = parameter.metadata?.json() ?? JSONObject()
            object["allowSecrets"] = nil
            // The description helps a debug menu explain keys the app did not declare.
            if let description = parameter.description, !description.isEmpty {
                object["description"] = .string(description)
            }
            if !object.isEmpty { metadata[parameter.key] = .object(object) }
            valueTypes[parameter.key] = parameter.valueType ?? .string
            if !parameter.conditionalValues.isEmpty { conditional.insert(parameter.key) }
        }
        self.metadata = metadata
        self.valueTypes = valueTypes
        self.hasConditionalValues = conditional
        var percent = Set<String>()
        for condition in version.template.conditions {
            let expression: ConditionExpression?
            switch condition.source {
            case .expression(let text): expression = try? ConditionParser.parse(text, conditionName: condition.name)
            case .structured(let json): expression = StructuredConditionReader.read(json).expression
            }
            if let expression, ServedTemplate.containsPercent(expression) { percent.insert(condition.name) }
        }
        percentConditions = percent
        var entryFragments: [[[UInt8]]] = []
        var metadataFragments: [[UInt8]] = []
        for (index, key) in compiled.keys.enumerated() {
            var quotedKey = ""
            JSONValue.writeString(key, to: &quotedKey)
            entryFragments.append(
                compiled.outcomes(ofParameterAt: index).map { outcome in
                    guard let value = outcome.value else { return [] }
                    var text = quotedKey + ":"
                    JSONValue.writeString(value.stringValue, to: &text)
                    return Array(text.utf8)
                }
            )
            metadataFragments.append(metadata[key].map { Array((quotedKey + ":" + $0.serialized()).utf8) } ?? [])
        }
        self.entryFragments = entryFragments
        self.metadataFragments = metadataFragments
    }

    /// `etag-{project}-{environment}-{version}`: changes with every publish.
    public static func etag(_ environment: EnvironmentKey, version: Int64) -> String {
        "etag-\(environment.projectId)-\(environment.environmentId)-\(version)"
    }

    static func containsPercent(_ expression: ConditionExpression) -> Bool {
        switch expression {
        case .percent: return true
        case .and(let operands), .or(let operands): return operands.contains(where: containsPercent)
        case .not(let operand): return containsPercent(operand)
        case .constant, .attribute: return false
        }
    }

    /// A strong ETag for one context's result: it changes only when that result changes.
    static func resultETag(_ text: String) -> String {
        etag(of: SHA256.hash(data: Array(text.utf8)))
    }

    /// The ETag of a fetch result: its entries and metadata, not the version, which may change
    /// without changing what this user gets.
    static func resultETag(entries: ArraySlice<UInt8>, metadata: [UInt8]) -> String {
        var hasher = SHA256()
        entries.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        metadata.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        return etag(of: hasher.finalize())
    }

    private static func etag(of digest: SHA256.Digest) -> String {
        "\"" + digest.withUnsafeBytes { APIKeySecret.hex(UnsafeRawBufferPointer(rebasing: $0.prefix(16))) } + "\""
    }
}
