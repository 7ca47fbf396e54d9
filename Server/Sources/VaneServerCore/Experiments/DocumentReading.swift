package import VaneCore

/// The checks every document reader here makes alike (experiment definitions, rollout plans):
/// each reports a problem at its JSON path through `problem` and reads on.
package enum DocumentReading {
    /// Reports a problem: its path, its rule and what was expected.
    package typealias Problem = (JSONPath, String, String) -> Void

    /// Reports every member of `object` that is not one of `allowed`.
    package static func unknownMembers(_ object: JSONObject, allowed: Set<String>, _ problem: Problem) {
        for member in object where !allowed.contains(member.key) {
            problem(
                JSONPath.root.appending(member.key),
                "unknown-member",
                "unknown member; expected one of \(allowed.sorted().joined(separator: ", "))"
            )
        }
    }

    /// The required identifier in `member` (``Identifier``'s rule); "" after reporting a problem.
    package static func identifier(_ object: JSONObject, member: String, _ problem: Problem) -> String {
        let text = object[member]?.stringValue ?? ""
        if !Identifier.isValid(text) {
            problem(
                JSONPath.root.appending(member),
                "identifier",
                object[member]?.stringValue == nil
                    ? "required: a string of 1-63 lower-case letters, digits or dashes"
                    : "\"\(text)\" must be 1-63 lower-case letters, digits or dashes, starting with a letter or digit"
            )
        }
        return text
    }

    /// The optional text in `member`, at most `maximum` characters; "" when absent or null.
    package static func optionalText(
        _ object: JSONObject,
        member: String,
        maximum: Int,
        _ problem: Problem
    ) -> String {
        let path = JSONPath.root.appending(member)
        switch object[member] {
        case nil, .null?:
            return ""
        case .string(let text)?:
            if text.count > maximum { problem(path, "length", "at most \(maximum) characters") }
            return text
        case let other?:
            problem(path, "type", "expected a string, found \(other.kindDescription)")
            return ""
        }
    }

    /// One line for an error message: "the experiment is not valid: 3 problems; the first: …".
    package static func summary(_ issues: [ValidationIssue], of what: String) -> String {
        guard let first = issues.first else { return "the \(what) is not valid" }
        let count = issues.count == 1 ? "1 problem" : "\(issues.count) problems"
        return "the \(what) is not valid: \(count); the first: \(first.path): \(first.message)"
    }
}
