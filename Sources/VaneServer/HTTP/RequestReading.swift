import Foundation
import Hummingbird
import NIOCore
import VaneCore

/// Reading what requests carry: path parameters, bodies, query items and ETags.
enum RequestReading {
    /// The project and environment named in the path.
    static func environment(_ context: VaneRequestContext) throws(APIError) -> EnvironmentKey {
        guard let project = context.parameters.get("project"), let environment = context.parameters.get("environment")
        else {
            throw APIError.invalidArgument("the path needs a project and an environment")
        }
        return EnvironmentKey(projectId: project, environmentId: environment)
    }

    /// The body's bytes, at most `limit` of them.
    static func body(_ request: Request, limit: Int) async throws -> [UInt8] {
        do {
            var buffer = try await request.body.collect(upTo: limit)
            return buffer.readBytes(length: buffer.readableBytes) ?? []
        } catch is NIOTooManyBytesError {
            throw APIError.payloadTooLarge(limit: limit)
        }
    }

    /// The body parsed as JSON; 400 with the line and column when it is not.
    static func json(_ request: Request, limit: Int) async throws -> JSONValue {
        let bytes = try await body(request, limit: limit)
        guard !bytes.isEmpty else {
            throw APIError.invalidArgument("the request body is empty; expected a JSON object")
        }
        do {
            return try JSONValue.parse(bytes)
        } catch {
            throw APIError.invalidArgument("the body is not valid JSON: \(error.description)")
        }
    }

    /// The body as a JSON object.
    static func object(_ request: Request, limit: Int = ServerLimits.maximumSmallBodyBytes) async throws -> JSONObject {
        let json = try await json(request, limit: limit)
        guard case .object(let object) = json else {
            throw APIError.invalidArgument("expected a JSON object, found \(json.kindDescription)")
        }
        return object
    }

    /// A required string member.
    static func string(_ object: JSONObject, _ key: String) throws(APIError) -> String {
        guard case .string(let value)? = object[key], !value.isEmpty else {
            throw APIError.invalidArgument(
                "\"\(key)\" is required: a non-empty string",
                details: [
                    ValidationIssue(
                        .error,
                        at: JSONPath.root.appending(key),
                        rule: "required",
                        "expected a non-empty string"
                    )
                ]
            )
        }
        return value
    }

    /// An optional string member.
    static func optionalString(_ object: JSONObject, _ key: String) throws(APIError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        case let other?:
            throw APIError.invalidArgument(
                "\"\(key)\" must be a string",
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

    /// An int64 that may come as a number or a string (Google's JSON writes int64 as strings).
    static func integer(_ value: JSONValue?, name: String) throws(APIError) -> Int64? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?:
            guard let number = Int64(text) else {
                throw APIError.invalidArgument("\"\(name)\" must be a whole number, found \"\(text)\"")
            }
            return number
        case .number(let number)?:
            guard let integer = number.intValue else {
                throw APIError.invalidArgument("\"\(name)\" must be a whole number")
            }
            return Int64(integer)
        case let other?:
            throw APIError.invalidArgument("\"\(name)\" must be a whole number, found \(other.kindDescription)")
        }
    }

    /// A whole-number query item.
    static func queryInteger(_ request: Request, _ name: String) throws(APIError) -> Int64? {
        guard let text = request.uri.queryParameters.get(name) else { return nil }
        guard let number = Int64(text) else {
            throw APIError.invalidArgument("query parameter \(name) must be a whole number, found \"\(text)\"")
        }
        return number
    }

    /// An RFC 3339 query item, as milliseconds.
    static func queryTime(_ request: Request, _ name: String) throws(APIError) -> Int64? {
        guard let text = request.uri.queryParameters.get(name) else { return nil }
        guard let milliseconds = Clock.milliseconds(rfc3339: text) else {
            throw APIError.invalidArgument(
                "query parameter \(name) must be an RFC 3339 time such as 2026-01-31T12:00:00Z, found \"\(text)\""
            )
        }
        return milliseconds
    }

    /// An ETag value without quotes or a weak prefix.
    static func bareETag(_ value: String) -> String {
        var text = Substring(value).drop { $0 == " " || $0 == "\t" }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        if text.hasPrefix("W/") { text = text.dropFirst(2) }
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = text.dropFirst().dropLast() }
        return String(text)
    }

    /// Whether an `If-None-Match` header matches an ETag (a list, `*`, or one value).
    static func ifNoneMatch(_ request: Request, matches etag: String) -> Bool {
        guard let header = request.headers[.ifNoneMatch] else { return false }
        let wanted = bareETag(etag)
        return header.split(separator: ",").contains { candidate in
            let value = bareETag(String(candidate))
            return value == "*" || value == wanted
        }
    }
}
