/// The values an app ships with, used until (and wherever) remote config has none.
///
/// Read from either of two JSON files:
/// - a flat object, as the server's `defaults?format=json` writes: `{"welcome": "Hi", "max_items": 20}`;
/// - a list of entries, as teams write by hand: `[{"name": "welcome", "description": "…", "value": "Hi"}]`.
///
/// Non-string values are stored as text the way Firebase's Node SDK does: `true` → `"true"`,
/// `20` → `"20"`, objects and arrays → their JSON text.
public struct InAppDefaults: Sendable, Hashable {
    /// One default.
    public struct Entry: Sendable, Hashable {
        /// The parameter key.
        public var key: String
        /// The value.
        public var value: CoercedValue
        /// What the parameter does, when the file says.
        public var description: String?

        /// Creates an entry.
        public init(key: String, value: CoercedValue, description: String? = nil) {
            self.key = key
            self.value = value
            self.description = description
        }
    }

    /// The defaults, in file order.
    public private(set) var entries: [Entry]
    private var index: [String: Int]

    /// Creates defaults from entries; a later entry for the same key replaces an earlier one.
    public init(_ entries: [Entry] = []) {
        self.entries = []
        self.index = [:]
        for entry in entries {
            if let position = index[entry.key] {
                self.entries[position] = entry
            } else {
                index[entry.key] = self.entries.count
                self.entries.append(entry)
            }
        }
    }

    /// Creates defaults from a dictionary.
    public init(_ values: [String: String]) {
        self.init(values.sorted { $0.key < $1.key }.map { Entry(key: $0.key, value: CoercedValue($0.value)) })
    }

    /// The default for a key.
    public subscript(key: String) -> CoercedValue? {
        get { index[key].map { entries[$0].value } }
        set {
            if let position = index[key] {
                if let newValue {
                    entries[position].value = newValue
                } else {
                    entries.remove(at: position)
                    index = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($0.element.key, $0.offset) })
                }
            } else if let newValue {
                index[key] = entries.count
                entries.append(Entry(key: key, value: newValue))
            }
        }
    }

    /// Reads a defaults file (either format).
    /// - Throws: ``DocumentError`` naming every malformed entry with its JSON path.
    public init(data: some Collection<UInt8>) throws(DocumentError) {
        try self.init(json: try DocumentError.parse(data))
    }

    /// Reads defaults from parsed JSON (either format).
    public init(json: JSONValue) throws(DocumentError) {
        var issues: [ValidationIssue] = []
        var entries: [Entry] = []
        switch json {
        case .object(let object):
            for member in object {
                guard let text = Self.text(of: member.value) else { continue }
                entries.append(Entry(key: member.key, value: CoercedValue(text)))
            }
        case .array(let elements):
            for (position, element) in elements.enumerated() {
                let path = JSONPath.root.appending(position)
                guard case .object(let object) = element else {
                    issues.append(
                        ValidationIssue(
                            .error,
                            at: path,
                            rule: "type",
                            "expected an entry {\"name\", \"value\"}, found \(element.kindDescription)"
                        )
                    )
                    continue
                }
                guard case .string(let name)? = object["name"], !name.isEmpty else {
                    issues.append(
                        ValidationIssue(
                            .error,
                            at: path.appending("name"),
                            rule: "required",
                            "expected the key as a non-empty string"
                        )
                    )
                    continue
                }
                guard let value = object["value"], let text = Self.text(of: value) else {
                    issues.append(
                        ValidationIssue(
                            .error,
                            at: path.appending("value"),
                            rule: "required",
                            "the entry \"\(name)\" has no value"
                        )
                    )
                    continue
                }
                var description: String?
                if case .string(let string)? = object["description"] { description = string }
                entries.append(Entry(key: name, value: CoercedValue(text), description: description))
            }
        default:
            issues.append(
                ValidationIssue(
                    .error,
                    at: .root,
                    rule: "type",
                    "expected an object of key → value or a list of {\"name\", \"value\"} entries, found \(json.kindDescription)"
                )
            )
        }
        guard issues.isEmpty else { throw DocumentError(issues: issues) }
        self.init(entries)
    }

    /// A JSON value as default text; nil for `null`, which means "no default".
    static func text(of value: JSONValue) -> String? {
        switch value {
        case .null: return nil
        case .string(let string): return string
        case .number(let number): return number.text
        case .bool(let bool): return bool ? "true" : "false"
        case .array, .object: return value.serialized()
        }
    }

    /// The defaults as the flat JSON object the server's `defaults?format=json` writes.
    public func json() -> JSONValue {
        var object = JSONObject()
        for entry in entries { object[entry.key] = .string(entry.value.stringValue) }
        return .object(object)
    }
}
