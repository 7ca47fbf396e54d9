import Hummingbird
import NIOCore
import VaneCore
import VaneServerCore

/// Reading what requests carry: path parameters, bodies, query items and ETags.
enum RequestReading {
    /// The project and environment named in the path.
    /// Whether the request asks only to check (`?validateOnly=true`, or `validate_only` as
    /// Firebase's REST API spells it): nothing is published.
    static func validateOnly(_ request: Request) -> Bool {
        request.uri.queryParameters.get("validateOnly") == "true"
            || request.uri.queryParameters.get("validate_only") == "true"
    }

    static func environment(_ context: VaneRequestContext) throws(APIError) -> EnvironmentKey {
        guard let project = context.parameters.get(EnvironmentAddress.projectParameter),
            let environment = context.parameters.get(EnvironmentAddress.environmentParameter)
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
        do {
            return try JSONBody.json(parsing: bytes)
        } catch {
            throw APIError(error)
        }
    }

    /// The body as a JSON object.
    static func object(_ request: Request, limit: Int = ServerLimits.maximumSmallBodyBytes) async throws -> JSONObject {
        try object(parsing: try await body(request, limit: limit))
    }

    /// Body bytes parsed as a JSON object.
    static func object(parsing bytes: [UInt8]) throws(APIError) -> JSONObject {
        do {
            return try JSONBody.object(parsing: bytes)
        } catch {
            throw APIError(error)
        }
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
        do {
            return try JSONBody.optionalString(object, key)
        } catch {
            throw APIError(error)
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

    /// A whole-number query item within `range`: anything else — not a number, beyond 64 bits,
    /// out of range — is a 400 naming the parameter, never a trap further in.
    static func queryInteger(
        _ request: Request,
        _ name: String,
        in range: ClosedRange<Int64>
    ) throws(APIError) -> Int64? {
        guard let text = request.uri.queryParameters.get(name) else { return nil }
        guard let number = Int64(text), range.contains(number) else {
            throw APIError.invalidArgument(
                "query parameter \(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), found \"\(text)\""
            )
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
        String(EntityTags.bare(Substring(value)))
    }
}
