import Foundation
import HTTPTypes
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
        try json(parsing: try await body(request, limit: limit))
    }

    /// Body bytes parsed as JSON; 400 with the line and column when they are not.
    static func json(parsing bytes: [UInt8]) throws(APIError) -> JSONValue {
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
        try object(parsing: try await body(request, limit: limit))
    }

    /// Body bytes parsed as a JSON object.
    static func object(parsing bytes: [UInt8]) throws(APIError) -> JSONObject {
        let json = try json(parsing: bytes)
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
        String(bareETag(Substring(value)))
    }

    /// An ETag value without surrounding blanks, quotes or a weak prefix. Works on UTF-8: this
    /// runs on every conditional request.
    static func bareETag(_ value: Substring) -> Substring {
        var text = value.utf8[...]
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        while let first = text.first, blank(first) { text = text.dropFirst() }
        while let last = text.last, blank(last) { text = text.dropLast() }
        if text.starts(with: "W/".utf8) { text = text.dropFirst(2) }
        if text.count >= 2, text.first == UInt8(ascii: "\""), text.last == UInt8(ascii: "\"") {
            text = text.dropFirst().dropLast()
        }
        return Substring(text)
    }

    /// Whether `matches` holds for one of the entity tags (bare, see ``bareETag(_:)-(Substring)``)
    /// of the request's `If-None-Match` fields. Splits on UTF-8 bytes: this runs on every poll.
    static func anyETag(inIfNoneMatch headers: HTTPFields, _ matches: (Substring) -> Bool) -> Bool {
        headers.contains { field in
            guard field.name == .ifNoneMatch else { return false }
            let header = field.value
            let utf8 = header.utf8
            var start = utf8.startIndex
            while true {
                let end = utf8[start...].firstIndex(of: UInt8(ascii: ",")) ?? utf8.endIndex
                if matches(bareETag(header[start..<end])) { return true }
                guard end < utf8.endIndex else { return false }
                start = utf8.index(after: end)
            }
        }
    }

    /// Whether an `If-None-Match` header matches an ETag (a list, `*`, or one value).
    static func ifNoneMatch(_ request: Request, matches etag: String) -> Bool {
        let wanted = bareETag(Substring(etag))
        return anyETag(inIfNoneMatch: request.headers) { $0 == "*" || $0 == wanted }
    }
}
