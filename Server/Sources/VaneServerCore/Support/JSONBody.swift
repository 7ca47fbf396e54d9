package import VaneCore

/// A request body that is not what the endpoint reads: the message and per-member details of a
/// 400 answer, free of any HTTP type so that serving code can throw it.
package struct RequestBodyError: Error, Sendable, Equatable {
    /// What is wrong and what to send instead.
    package var message: String
    /// Per-member problems, with their JSON paths.
    package var details: [ValidationIssue] = []
}

/// Reading JSON request bodies.
package enum JSONBody {
    /// Body bytes parsed as JSON; the parser's line and column when they are not.
    package static func json(parsing bytes: [UInt8]) throws(RequestBodyError) -> JSONValue {
        guard !bytes.isEmpty else {
            throw RequestBodyError(message: "the request body is empty; expected a JSON object")
        }
        do {
            return try JSONValue.parse(bytes)
        } catch {
            throw RequestBodyError(message: "the body is not valid JSON: \(error.description)")
        }
    }

    /// Body bytes parsed as a JSON object.
    package static func object(parsing bytes: [UInt8]) throws(RequestBodyError) -> JSONObject {
        let json = try json(parsing: bytes)
        guard case .object(let object) = json else {
            throw RequestBodyError(message: "expected a JSON object, found \(json.kindDescription)")
        }
        return object
    }

    /// An optional string member.
    package static func optionalString(_ object: JSONObject, _ key: String) throws(RequestBodyError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        case let other?:
            throw RequestBodyError(
                message: "\"\(key)\" must be a string",
                details: [
                    ValidationIssue(
                        .error,
                        at: JSONPath.root.appending(key),
                        rule: "type",
                        "expected a string, found \(other.kindDescription)"
                    )
                ]
            )
        }
    }
}
