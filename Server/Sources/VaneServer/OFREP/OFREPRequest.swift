import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import VaneCore
import VaneServerCore

/// Reading an OFREP request: who calls, which environment it evaluates, and its context.
enum OFREPRequest {
    /// The header naming the project, required with an admin key.
    static let projectHeader = HTTPField.Name("X-Vane-Project")
    /// The header naming the environment, required with an admin key.
    static let environmentHeader = HTTPField.Name("X-Vane-Environment")

    /// The caller's key: 401 with no body when it is missing, unknown or revoked.
    static func principal(_ request: Request, keys: KeyIndex) async throws(OFREPError) -> Principal {
        guard let secret = APIKeyCredentials.secret(in: request.headers),
            let key = await keys.authenticate(secret: secret)
        else { throw OFREPError.unauthorized }
        return Principal(key: key)
    }

    /// The environment to evaluate.
    ///
    /// A client or server key evaluates its own environment; `X-Vane-Project` and
    /// `X-Vane-Environment`, if sent, must name it (else 403). An admin key must send both
    /// (else 400, since OFREP has no other way to say what is missing).
    static func environment(
        _ request: Request,
        principal: Principal,
        flagKey: String?
    ) throws(OFREPError) -> EnvironmentKey {
        let project = header(request, projectHeader)
        let environment = header(request, environmentHeader)
        guard case .key(let key) = principal.identity else { throw OFREPError.forbidden }
        if key.role == .admin {
            guard let project, let environment else {
                throw OFREPError.badRequest(
                    .general,
                    "an admin key must name what to evaluate: send the X-Vane-Project and X-Vane-Environment "
                        + "headers, or use a client or server key",
                    flagKey: flagKey
                )
            }
            return EnvironmentKey(projectId: project, environmentId: environment)
        }
        guard let ownProject = key.projectId, let ownEnvironment = key.environmentId else {
            throw OFREPError.forbidden
        }
        let target = EnvironmentKey(projectId: project ?? ownProject, environmentId: environment ?? ownEnvironment)
        do {
            try principal.require(.fetch(target))
        } catch {
            throw OFREPError.forbidden
        }
        return target
    }

    /// The request body, at most ``ServerLimits/maximumContextBytes``.
    static func body(_ request: Request, flagKey: String?) async throws -> [UInt8] {
        do {
            var buffer = try await request.body.collect(upTo: ServerLimits.maximumContextBytes)
            return buffer.readBytes(length: buffer.readableBytes) ?? []
        } catch is NIOTooManyBytesError {
            throw OFREPError.badRequest(
                .invalidContext,
                "the request body is larger than \(ServerLimits.maximumContextBytes) bytes; send a smaller context",
                flagKey: flagKey
            )
        }
    }

    /// The evaluation context of a body `{"context": {...}}`.
    ///
    /// Lenient as OFREP providers need: no body, no `context` (or `null`) and no `targetingKey`
    /// all mean an empty context. Invalid JSON → 400 `PARSE_ERROR`; a body or context that is not
    /// an object, or a member Vane cannot use → 400 `INVALID_CONTEXT` naming the member.
    static func context(bytes: [UInt8], flagKey: String?) throws(OFREPError) -> EvaluationContext {
        guard bytes.contains(where: { !isJSONWhitespace($0) }) else { return EvaluationContext() }
        let json: JSONValue
        do {
            json = try JSONValue.parse(bytes)
        } catch {
            throw OFREPError.badRequest(
                .parseError,
                "the body is not valid JSON (\(error.description)); send {\"context\": {\"targetingKey\": \"…\"}}",
                flagKey: flagKey
            )
        }
        guard case .object(let body) = json else {
            throw OFREPError.badRequest(
                .invalidContext,
                "the body must be a JSON object such as {\"context\": {\"targetingKey\": \"…\"}}, found "
                    + json.kindDescription,
                flagKey: flagKey
            )
        }
        let contextJSON: JSONValue
        switch body["context"] {
        case nil, .null?: contextJSON = .object([:])
        case let value?: contextJSON = value
        }
        do {
            return try EvaluationContext(json: contextJSON, at: JSONPath.root.appending("context"))
        } catch {
            let problems = error.issues.map { "\($0.path): \($0.message)" }.joined(separator: "; ")
            throw OFREPError.badRequest(.invalidContext, problems, flagKey: flagKey)
        }
    }

    private static func header(_ request: Request, _ name: HTTPField.Name?) -> String? {
        guard let name, let value = request.headers[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty
        else {
            return nil
        }
        return value
    }

    private static func isJSONWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
            || byte == UInt8(ascii: "\r")
    }
}
