/// Reads typed fields out of JSON, collecting every type mismatch with its path instead of
/// stopping at the first one.
struct JSONFieldReader {
    private(set) var issues: [ValidationIssue] = []

    mutating func fail(_ path: JSONPath, _ message: String, rule: String = "type") {
        issues.append(ValidationIssue(.error, at: path, rule: rule, message))
    }

    mutating func mismatch(_ value: JSONValue, _ expected: String, at path: JSONPath) {
        fail(path, "expected \(expected), found \(value.kindDescription)")
    }

    mutating func object(_ value: JSONValue?, at path: JSONPath) -> JSONObject? {
        guard let value, value != .null else { return nil }
        guard case .object(let object) = value else {
            mismatch(value, "an object", at: path)
            return nil
        }
        return object
    }

    mutating func array(_ value: JSONValue?, at path: JSONPath) -> [JSONValue]? {
        guard let value, value != .null else { return nil }
        guard case .array(let array) = value else {
            mismatch(value, "an array", at: path)
            return nil
        }
        return array
    }

    mutating func string(_ value: JSONValue?, at path: JSONPath) -> String? {
        guard let value, value != .null else { return nil }
        guard case .string(let string) = value else {
            mismatch(value, "a string", at: path)
            return nil
        }
        return string
    }

    /// An int64 that Google's JSON writes as a string (`"42"`) but that people also write as a number.
    mutating func integerString(_ value: JSONValue?, at path: JSONPath) -> String? {
        guard let value, value != .null else { return nil }
        switch value {
        case .string(let string) where Int64(string) != nil: return string
        case .number(let number) where number.intValue != nil: return number.intValue.map(String.init)
        default:
            fail(
                path,
                "expected a whole number (as a string such as \"42\" or a number), found \(value.kindDescription)"
            )
            return nil
        }
    }

    mutating func bool(_ value: JSONValue?, at path: JSONPath) -> Bool? {
        guard let value, value != .null else { return nil }
        guard case .bool(let bool) = value else {
            mismatch(value, "true or false", at: path)
            return nil
        }
        return bool
    }

    mutating func stringList(_ value: JSONValue?, at path: JSONPath) -> [String]? {
        guard let elements = array(value, at: path) else { return nil }
        var strings: [String] = []
        for (index, element) in elements.enumerated() {
            if let string = string(element, at: path.appending(index)) { strings.append(string) }
        }
        return strings
    }

    /// The members not in `known`, kept so that a read and write loses nothing.
    func unknownMembers(of object: JSONObject, known: Set<String>) -> JSONObject {
        JSONObject(object.members.filter { !known.contains($0.key) })
    }
}
