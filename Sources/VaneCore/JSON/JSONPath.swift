/// Where a value sits in a JSON document: `parameters.welcome.defaultValue.value`,
/// `conditions[2].expression`.
///
/// Every error Vane reports about a document names its path, so the reader can go straight to
/// the place that needs fixing.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible, Comparable {
    /// One step of a path.
    public enum Component: Sendable, Hashable {
        /// An object member.
        case key(String)
        /// An array element, counted from 0.
        case index(Int)
    }

    /// The steps from the document root.
    public private(set) var components: [Component]

    /// The path of the document itself.
    public static let root = JSONPath(components: [])

    /// Creates a path from its steps.
    public init(components: [Component]) {
        self.components = components
    }

    /// The path one member further down.
    public func appending(_ key: String) -> JSONPath {
        appending(component: .key(key))
    }

    /// The path one element further down.
    public func appending(_ index: Int) -> JSONPath {
        appending(component: .index(index))
    }

    /// One allocation per step: validation builds a path for every value of large templates.
    private func appending(component: Component) -> JSONPath {
        var steps: [Component] = []
        steps.reserveCapacity(components.count + 1)
        steps += components
        steps.append(component)
        return JSONPath(components: steps)
    }

    /// The path followed by another path's steps.
    public func appending(_ other: JSONPath) -> JSONPath {
        JSONPath(components: components + other.components)
    }

    /// Dotted notation; keys that are not identifiers are bracketed and quoted:
    /// `parameters["my key"].defaultValue`. The root is `$`.
    public var description: String {
        guard !components.isEmpty else { return "$" }
        var text = ""
        for component in components {
            switch component {
            case .index(let index):
                text += "[\(index)]"
            case .key(let key):
                if JSONPath.isPlainKey(key) {
                    if !text.isEmpty { text += "." }
                    text += key
                } else {
                    text += "[\"" + key.replacingQuotesAndBackslashes() + "\"]"
                }
            }
        }
        return text
    }

    /// Orders paths by their text, so reports list problems in a stable order.
    public static func < (lhs: JSONPath, rhs: JSONPath) -> Bool { lhs.description < rhs.description }

    private static func isPlainKey(_ key: String) -> Bool {
        guard let first = key.utf8.first, !(first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")) else {
            return false
        }
        return key.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "-")
        }
    }
}

extension String {
    fileprivate func replacingQuotesAndBackslashes() -> String {
        var result = ""
        for character in self {
            if character == "\"" || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result
    }
}
