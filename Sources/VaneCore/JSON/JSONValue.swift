/// A JSON document kept exactly as written: object members in order, numbers with their text.
///
/// Vane reads templates into `JSONValue` first, so that fields it does not know (a new
/// Firebase field, a managed `rolloutValue`) survive a read and write unchanged, and so that
/// every error can name the JSON path where it happened.
public enum JSONValue: Sendable, Hashable {
    /// `null`
    case null
    /// `true` or `false`
    case bool(Bool)
    /// A number, with the text it was written as.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, members in document order.
    case object(JSONObject)
}

/// A JSON number that remembers its text, so `20000000` is not written back as `2e7`.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number as written in the document.
    public let text: String
    /// The number's value.
    public let value: Double

    /// Creates a number from its JSON text; nil when the text is not a JSON number.
    public init?(text: String) {
        guard JSONNumber.isValidSyntax(text), let value = Double(text) else { return nil }
        self.text = text
        self.value = value
    }

    /// Creates a number from a value, written in its shortest round-trip form.
    public init(_ value: Double) {
        self.value = value
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 {
            self.text = String(Int64(value))
        } else {
            self.text = "\(value)"
        }
    }

    /// Creates a number from an integer.
    public init(_ value: Int) {
        self.value = Double(value)
        self.text = String(value)
    }

    /// The number as written.
    public var description: String { text }

    /// The value as an integer, when it is one exactly.
    public var intValue: Int? {
        if let exact = Int(text) { return exact }
        guard value.isFinite, value == value.rounded(), abs(value) < 9.0e15 else { return nil }
        return Int(value)
    }

    /// Whether `text` follows RFC 8259's number grammar.
    static func isValidSyntax(_ text: String) -> Bool {
        var bytes = text.utf8.makeIterator()
        var current = bytes.next()
        if current == UInt8(ascii: "-") { current = bytes.next() }
        guard let first = current else { return false }
        if first == UInt8(ascii: "0") {
            current = bytes.next()
        } else if first >= UInt8(ascii: "1") && first <= UInt8(ascii: "9") {
            repeat { current = bytes.next() } while current.map(isDigit) ?? false
        } else {
            return false
        }
        if current == UInt8(ascii: ".") {
            current = bytes.next()
            guard current.map(isDigit) ?? false else { return false }
            repeat { current = bytes.next() } while current.map(isDigit) ?? false
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            current = bytes.next()
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { current = bytes.next() }
            guard current.map(isDigit) ?? false else { return false }
            repeat { current = bytes.next() } while current.map(isDigit) ?? false
        }
        return current == nil
    }
}

@inline(__always)
private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

/// A JSON object's members, in document order, with lookup by key (through an index once it has
/// more than eight members).
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One `"key": value` member.
    public struct Member: Sendable, Hashable {
        /// The member's name.
        public var key: String
        /// The member's value.
        public var value: JSONValue

        /// Creates a member.
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The members, in order.
    public private(set) var members: [Member]
    /// Position of each key in `members`, made once the object has more than ``indexedFrom``
    /// members. Below that, comparing the keys in turn costs less than hashing them and keeping a
    /// dictionary, and most objects are that small (a fetch's context, an event, a condition).
    private var positions: [String: Int]?
    /// The most members an object keeps without ``positions``.
    private static let indexedFrom = 8

    /// Creates an object from members; a later member replaces an earlier one of the same key.
    public init(_ members: [Member] = []) {
        self.members = []
        self.positions = nil
        for member in members { self[member.key] = member.value }
    }

    /// Creates an object from a literal.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements.map { Member(key: $0.0, value: $0.1) })
    }

    /// The value of the member with this key. Setting nil removes the member; setting a new key
    /// appends it.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            if let position = position(of: key) {
                if let newValue {
                    members[position].value = newValue
                } else {
                    members.remove(at: position)
                    if positions != nil {
                        positions?[key] = nil
                        for index in position..<members.count { positions?[members[index].key] = index }
                    }
                }
            } else if let newValue {
                appendNew(key: key, value: newValue)
            }
        }
    }

    /// Whether a member has this key.
    func contains(key: String) -> Bool { position(of: key) != nil }

    /// Appends a member whose key the object does not have yet (the caller checked).
    mutating func appendNew(key: String, value: JSONValue) {
        members.append(Member(key: key, value: value))
        if positions != nil {
            positions?[key] = members.count - 1
        } else if members.count > Self.indexedFrom {
            var index: [String: Int] = [:]
            index.reserveCapacity(members.count * 2)
            for (position, member) in members.enumerated() { index[member.key] = position }
            positions = index
        }
    }

    private func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        return members.firstIndex { $0.key == key }
    }

    /// The keys, in order.
    public var keys: [String] { members.map(\.key) }

    /// The number of members.
    public var count: Int { members.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { members.isEmpty }

    /// Iterates the members in order.
    public func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }

    /// Objects are equal when their members are, in the same order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool { lhs.members == rhs.members }

    /// Hashes the members.
    public func hash(into hasher: inout Hasher) { hasher.combine(members) }
}

extension JSONValue {
    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The object, when this is an object.
    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }

    /// The Boolean, when this is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let bool) = self { return bool }
        return nil
    }

    /// The number, when this is a number.
    public var numberValue: JSONNumber? {
        if case .number(let number) = self { return number }
        return nil
    }

    /// A phrase for error messages: "a string", "an object", …
    public var kindDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a Boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A number.
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    /// A number.
    public init(floatLiteral value: Double) { self = .number(JSONNumber(value)) }
    /// `true` or `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object, members in the literal's order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements.map { JSONObject.Member(key: $0.0, value: $0.1) }))
    }
}
