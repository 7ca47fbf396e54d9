/// The body of a `200` answer to `POST …/fetch`: one client's values.
///
/// ```json
/// {"state": "UPDATE", "entries": {"banner_text": "Willkommen!"}, "templateVersion": "12",
///  "metadata": {"banner_text": {"title": "Banner", "category": "Home"}}}
/// ```
///
/// The server assembles `UPDATE` bodies from pre-serialized fragments (see ``updatePrefix``);
/// clients read every state with ``init(json:)``.
public struct FetchResponseBody: Sendable, Hashable {
    /// What the answer means.
    public enum State: String, Sendable, Hashable {
        /// New values (`entries` is every value this client receives).
        case update = "UPDATE"
        /// The values the client named with its ETag are still current; no entries are sent.
        case noChange = "NO_CHANGE"
        /// The environment has no published template; `entries` is empty.
        case noTemplate = "NO_TEMPLATE"
    }

    /// What the answer means.
    public var state: State
    /// The values by key (`UPDATE` and `NO_TEMPLATE`).
    public var entries: [String: String]
    /// Details for keys that have any.
    public var metadata: [String: KeyMetadata]
    /// The template version the values come from (0 when none is published).
    public var templateVersion: Int64

    /// Creates a body.
    public init(
        state: State,
        entries: [String: String] = [:],
        metadata: [String: KeyMetadata] = [:],
        templateVersion: Int64
    ) {
        self.state = state
        self.entries = entries
        self.metadata = metadata
        self.templateVersion = templateVersion
    }

    /// Reads a body strictly: anything unexpected throws, naming its JSON path.
    public init(json: JSONValue) throws(WireFormatError) {
        guard case .object(let object) = json else {
            throw WireFormatError(path: .root, expected: "a JSON object", found: json.kindDescription)
        }
        guard let version = TemplateVersionNumber.read(object["templateVersion"]) else {
            throw WireFormatError(
                path: .root.appending("templateVersion"),
                expected: "a version number",
                found: object["templateVersion"]?.kindDescription ?? "nothing"
            )
        }
        let stateText = object["state"]?.stringValue
        guard let state = stateText.flatMap(State.init(rawValue:)) else {
            throw WireFormatError(
                path: .root.appending("state"),
                expected: "UPDATE, NO_CHANGE or NO_TEMPLATE",
                found: stateText ?? object["state"]?.kindDescription ?? "nothing"
            )
        }
        var entries: [String: String] = [:]
        var metadata: [String: KeyMetadata] = [:]
        if state != .noChange {
            guard case .object(let entryObject)? = object["entries"] else {
                throw WireFormatError(
                    path: .root.appending("entries"),
                    expected: "an object",
                    found: object["entries"]?.kindDescription ?? "nothing"
                )
            }
            for member in entryObject {
                guard case .string(let value) = member.value else {
                    throw WireFormatError(
                        path: .root.appending("entries").appending(member.key),
                        expected: "a string",
                        found: member.value.kindDescription
                    )
                }
                entries[member.key] = value
            }
            if case .object(let metadataObject)? = object["metadata"] {
                for member in metadataObject {
                    if case .object(let details) = member.value { metadata[member.key] = KeyMetadata(json: details) }
                }
            }
        }
        self.init(state: state, entries: entries, metadata: metadata, templateVersion: version)
    }

    /// The body as JSON, in the member order the server writes.
    public func json() -> JSONValue {
        var object: JSONObject = ["state": .string(state.rawValue)]
        if state != .noChange {
            var entryObject = JSONObject()
            for key in entries.keys.sorted() { entryObject[key] = .string(entries[key] ?? "") }
            object["entries"] = .object(entryObject)
        }
        object["templateVersion"] = TemplateVersionNumber.json(templateVersion)
        if !metadata.isEmpty {
            var metadataObject = JSONObject()
            for key in metadata.keys.sorted() { metadataObject[key] = .object(metadata[key]?.json() ?? [:]) }
            object["metadata"] = .object(metadataObject)
        }
        return .object(object)
    }

    /// The bytes an `UPDATE` body starts with; the server writes the entries' members next.
    public static let updatePrefix = Array(#"{"state":"UPDATE","entries":{"#.utf8)

    /// The bytes between an `UPDATE` body's entries and its metadata object.
    public static func updateMiddle(templateVersion: Int64) -> [UInt8] {
        Array(#"},"templateVersion":"\#(templateVersion)","metadata":"#.utf8)
    }

    /// The whole `NO_CHANGE` body for a version.
    public static func noChangeBytes(templateVersion: Int64) -> [UInt8] {
        Array(#"{"state":"NO_CHANGE","templateVersion":"\#(templateVersion)"}"#.utf8)
    }

    /// The whole `NO_TEMPLATE` body.
    public static let noTemplateBytes = Array(#"{"state":"NO_TEMPLATE","entries":{},"templateVersion":"0"}"#.utf8)
}

/// A request or response body that does not have the shape the HTTP API defines.
public struct WireFormatError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where in the body.
    public var path: JSONPath
    /// What the API defines there.
    public var expected: String
    /// What the body has instead.
    public var found: String

    /// Creates an error.
    public init(path: JSONPath, expected: String, found: String) {
        self.path = path
        self.expected = expected
        self.found = found
    }

    /// `$.entries.banner: expected a string, found a number`.
    public var description: String { "\(path): expected \(expected), found \(found)" }
}
