import VaneAuthoring
import VaneCore

/// Where a validation issue is in a template, for the pages that show issues beside a flag:
/// the flag editor and the review.
enum ParameterIssues {
    /// The validator's issues about one parameter (wherever it lives: top level or a group).
    static func issues(about key: String, in issues: [ValidationIssue]) -> [ValidationIssue] {
        issues.filter { relativePath(of: $0.path, parameter: key) != nil }
    }

    /// The rest of `path` below the parameter `key`, or nil when the path is elsewhere.
    static func relativePath(of path: JSONPath, parameter key: String) -> [JSONPath.Component]? {
        guard let location = parameterLocation(of: path), location.key == key else { return nil }
        return location.rest
    }

    /// The parameter a validation path is about (at the top level or in a group) and the rest of
    /// the path below it; nil when the path is about something else.
    static func parameterLocation(of path: JSONPath) -> (key: String, rest: [JSONPath.Component])? {
        let components = path.components
        if components.count >= 2, components[0] == .key("parameters"), case .key(let key) = components[1] {
            return (key, Array(components.dropFirst(2)))
        }
        if components.count >= 4, components[0] == .key("parameterGroups"), components[2] == .key("parameters"),
            case .key(let key) = components[3]
        {
            return (key, Array(components.dropFirst(4)))
        }
        return nil
    }
}
