import Foundation
import Vane
import VaneCore

/// A small client for Vane's admin API (`docs/openapi.yaml`), used by the CLI's remote commands.
///
/// Every method sends the key as `Authorization: Bearer <key>`; the key never appears in an
/// error or in anything the client prints.
struct VaneAdminClient: Sendable {
    /// A response: status, body and ETag.
    struct Reply: Sendable {
        /// The HTTP status code.
        var status: Int
        /// The body as sent.
        var body: Data
        /// The `ETag` header, if any.
        var etag: String?

        /// The body as JSON; an error naming the server when it is not JSON.
        func json(from server: URL) throws(Failure) -> JSONValue {
            do {
                return try JSONValue.parse(Array(body))
            } catch {
                throw Failure.malformedResponse(server: server, reason: "the body is not JSON: \(error.description)")
            }
        }
    }

    /// Why a request failed, with what to do about it.
    enum Failure: Error, Sendable, CustomStringConvertible {
        /// Nothing listens at the URL, or the name does not resolve.
        case cannotConnect(server: URL, reason: String)
        /// The server did not answer in time.
        case timedOut(server: URL, seconds: Double)
        /// The server answered with an error envelope (or at least an error status).
        case server(status: Int, canonicalStatus: String?, message: String, details: [Detail])
        /// The server answered something this client cannot read.
        case malformedResponse(server: URL, reason: String)

        /// One problem from an error envelope's `details`.
        struct Detail: Sendable {
            /// The JSON path of the problem.
            var path: String
            /// `error` or `warning`.
            var severity: String
            /// What is wrong.
            var message: String
        }

        /// The message, then one line per detail.
        var description: String {
            switch self {
            case .cannotConnect(let server, let reason):
                return "cannot connect to the Vane server at \(server.absoluteString) (\(reason)): is `vane serve` "
                    + "running? Start it, or point --server (or VANE_SERVER) at the right URL"
            case .timedOut(let server, let seconds):
                return "the Vane server at \(server.absoluteString) did not answer within \(Int(seconds)) s; "
                    + "check that it is healthy (GET /readyz) and try again"
            case .server(let status, let canonicalStatus, let message, let details):
                let code = canonicalStatus.map { "\(status) \($0)" } ?? String(status)
                var lines = ["error: \(message) (HTTP \(code))"]
                for detail in details { lines.append("  \(detail.severity): \(detail.path): \(detail.message)") }
                return lines.joined(separator: "\n")
            case .malformedResponse(let server, let reason):
                return "the server at \(server.absoluteString) sent an answer vane cannot read (\(reason)); "
                    + "is it a Vane server of the same version?"
            }
        }

        /// The HTTP status, for errors the server sent.
        var status: Int? {
            if case .server(let status, _, _, _) = self { return status }
            return nil
        }
    }

    /// The server's base URL (`http://127.0.0.1:8080`).
    let server: URL
    /// The API key.
    let key: String
    /// Seconds to wait for an answer.
    let timeout: Double

    /// Creates a client.
    init(server: URL, key: String, timeout: Double = 30) {
        self.server = server
        self.key = key
        self.timeout = timeout
    }

    // MARK: - Templates

    /// The path of an environment's resource (``EnvironmentAddress/path(_:)``: the server's routes
    /// and the SDK's requests use the same one).
    static func environmentPath(project: String, environment: String, _ resource: EnvironmentResource) -> String {
        EnvironmentAddress(project: project, environment: environment).path(resource)
    }

    /// `GET …/template` (or one version of it): the template's JSON and its ETag.
    func template(project: String, environment: String, version: Int64? = nil) async throws(Failure) -> Reply {
        let query = version.map { [URLQueryItem(name: "versionNumber", value: String($0))] } ?? []
        return try await send(
            "GET",
            Self.environmentPath(project: project, environment: environment, .template),
            query: query
        )
    }

    /// `PUT …/template` with `If-Match`: publishes and returns the stored template.
    func publish(project: String, environment: String, template: Data, ifMatch: String) async throws(Failure) -> Reply {
        try await send(
            "PUT",
            Self.environmentPath(project: project, environment: environment, .template),
            body: template,
            headers: ["If-Match": ifMatch]
        )
    }

    /// `GET …/versions`, newest first.
    func versions(project: String, environment: String, pageSize: Int) async throws(Failure) -> Reply {
        try await send(
            "GET",
            Self.environmentPath(project: project, environment: environment, .versions),
            query: [URLQueryItem(name: "pageSize", value: String(pageSize))]
        )
    }

    /// `POST …/rollback`: publishes a copy of an old version.
    /// `POST …/rollback`: the whole template, or with `flag` only that flag, as version `version`
    /// had it; `reason` goes into the version's description and the audit entry.
    func rollback(
        project: String,
        environment: String,
        to version: Int64,
        flag: String? = nil,
        reason: String? = nil
    ) async throws(Failure) -> Reply {
        var body: JSONObject = ["versionNumber": .string(String(version))]
        if let flag { body["flag"] = .string(flag) }
        if let reason { body["reason"] = .string(reason) }
        return try await send(
            "POST",
            Self.environmentPath(project: project, environment: environment, .rollback),
            body: Data(JSONValue.object(body).serialized(.compact).utf8)
        )
    }

    /// `GET …/diff?from=A&to=B`.
    func diff(project: String, environment: String, from: Int64, to: Int64) async throws(Failure) -> Reply {
        try await send(
            "GET",
            Self.environmentPath(project: project, environment: environment, .diff),
            query: [URLQueryItem(name: "from", value: String(from)), URLQueryItem(name: "to", value: String(to))]
        )
    }

    /// `POST …/flags/{key}/switch`: the kill switch of a Boolean flag; with `validateOnly`, what it
    /// would change, without publishing.
    func switchFlag(
        project: String,
        environment: String,
        flag: String,
        to position: String,
        message: String,
        validateOnly: Bool
    ) async throws(Failure) -> Reply {
        let body: JSONValue = ["to": .string(position), "message": .string(message)]
        return try await send(
            "POST",
            EnvironmentAddress(project: project, environment: environment).path() + "/flags/"
                + EnvironmentAddress.pathSegment(flag) + "/switch",
            query: validateOnly ? [URLQueryItem(name: "validateOnly", value: "true")] : [],
            body: Data(body.serialized(.compact).utf8)
        )
    }

    /// `POST …/flags/{key}/copy`: the flag copied into environment `target`'s live template,
    /// with the diff and impact sample; nothing is stored.
    func copyFlag(project: String, environment: String, flag: String, to target: String) async throws(Failure) -> Reply
    {
        let body: JSONValue = ["to": .string(target)]
        return try await send(
            "POST",
            EnvironmentAddress(project: project, environment: environment).path() + "/flags/"
                + EnvironmentAddress.pathSegment(flag) + "/copy",
            body: Data(body.serialized(.compact).utf8)
        )
    }

    /// `POST …/template/rebase`: a template written on `baseVersion` merged onto the live version;
    /// 200 with the merged template, or 409 with the conflicts (both are replies, not failures).
    func rebase(
        project: String,
        environment: String,
        baseVersion: Int64,
        template: JSONValue,
        choices: JSONValue
    ) async throws(Failure) -> Reply {
        let body: JSONValue = [
            "baseVersion": .string(String(baseVersion)), "template": template, "choices": choices,
        ]
        return try await send(
            "POST",
            Self.environmentPath(project: project, environment: environment, .template) + "/rebase",
            body: Data(body.serialized(.compact).utf8),
            accepting: [409]
        )
    }

    /// `POST …/evaluate`: every key's value for a context in the live template, and why.
    func evaluate(
        project: String,
        environment: String,
        context: JSONValue,
        compareEnvironment: String?
    ) async throws(Failure) -> Reply {
        var body: JSONObject = ["context": context]
        if let compareEnvironment { body["compareEnvironment"] = .string(compareEnvironment) }
        return try await send(
            "POST",
            EnvironmentAddress(project: project, environment: environment).path() + "/evaluate",
            body: Data(JSONValue.object(body).serialized(.compact).utf8)
        )
    }

    // MARK: - Experiments

    /// `POST …/experiments` with a definition.
    func createExperiment(project: String, environment: String, definition: Data) async throws(Failure) -> Reply {
        try await send(
            "POST",
            Self.environmentPath(project: project, environment: environment, .experiments),
            body: definition
        )
    }

    /// `GET …/experiments`, optionally only those with a status.
    func listExperiments(project: String, environment: String, status: String?) async throws(Failure) -> Reply {
        try await send(
            "GET",
            Self.environmentPath(project: project, environment: environment, .experiments),
            query: status.map { [URLQueryItem(name: "status", value: $0)] } ?? []
        )
    }

    /// `GET …/experiments/{key}`, or `POST …/experiments/{key}/start` or `/stop` with an action.
    func experiment(
        project: String,
        environment: String,
        key: String,
        action: String? = nil
    ) async throws(Failure)
        -> Reply
    {
        let path =
            Self.environmentPath(project: project, environment: environment, .experiments) + "/"
            + EnvironmentAddress.pathSegment(key) + (action.map { "/" + $0 } ?? "")
        return try await send(action == nil ? "GET" : "POST", path)
    }

    /// `GET …/experiments/{key}/{resource}`: an experiment's `results` (JSON) or `events` (NDJSON).
    func experimentResource(
        project: String,
        environment: String,
        key: String,
        resource: String,
        query: [URLQueryItem] = []
    ) async throws(Failure) -> Reply {
        let path =
            Self.environmentPath(project: project, environment: environment, .experiments) + "/"
            + EnvironmentAddress.pathSegment(key) + "/" + resource
        return try await send("GET", path, query: query)
    }

    // MARK: - Keys

    /// `POST /v1/keys`: the new key's record, with its secret in `key`.
    func createKey(name: String, role: String, project: String?, environment: String?) async throws(Failure) -> Reply {
        var body: JSONObject = ["name": .string(name), "role": .string(role)]
        if let project { body["project"] = .string(project) }
        if let environment { body["environment"] = .string(environment) }
        return try await send("POST", "/v1/keys", body: Data(JSONValue.object(body).serialized(.compact).utf8))
    }

    /// `GET /v1/keys`.
    func listKeys() async throws(Failure) -> Reply {
        try await send("GET", "/v1/keys")
    }

    /// `DELETE /v1/keys/{id}`.
    func revokeKey(id: String) async throws(Failure) -> Reply {
        try await send("DELETE", "/v1/keys/\(EnvironmentAddress.pathSegment(id))")
    }

    /// `POST /v1/users`.
    func createUser(email: String, name: String?, role: String, environments: [String]) async throws(Failure) -> Reply {
        var body: JSONObject = [
            "email": .string(email), "role": .string(role), "environments": .array(environments.map { .string($0) }),
        ]
        if let name { body["name"] = .string(name) }
        return try await send("POST", "/v1/users", body: Data(JSONValue.object(body).serialized(.compact).utf8))
    }

    /// `GET /v1/users`.
    func listUsers() async throws(Failure) -> Reply {
        try await send("GET", "/v1/users")
    }

    /// `PATCH /v1/users/{id}`.
    func updateUser(id: String, changes: JSONObject) async throws(Failure) -> Reply {
        try await send(
            "PATCH",
            "/v1/users/\(EnvironmentAddress.pathSegment(id))",
            body: Data(JSONValue.object(changes).serialized(.compact).utf8)
        )
    }

    /// `POST /v1/users/{id}/password`.
    func resetUserPassword(id: String) async throws(Failure) -> Reply {
        try await send("POST", "/v1/users/\(EnvironmentAddress.pathSegment(id))/password")
    }

    // MARK: - Transport

    /// Sends a request; a status of 400 or more becomes ``Failure/server(status:canonicalStatus:message:details:)``.
    func send(
        _ method: String,
        _ path: String,
        query: [URLQueryItem] = [],
        body: Data? = nil,
        headers: [String: String] = [:],
        accepting answers: Set<Int> = []
    ) async throws(Failure) -> Reply {
        guard var components = URLComponents(url: server, resolvingAgainstBaseURL: false) else {
            throw Failure.malformedResponse(server: server, reason: "the server URL cannot be used")
        }
        let base =
            components.percentEncodedPath.hasSuffix("/")
            ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        components.percentEncodedPath = base + path
        components.queryItems = query.isEmpty ? nil : query
        guard let url = components.url else {
            throw Failure.malformedResponse(server: server, reason: "cannot build a URL for \(path)")
        }
        var fields = [
            "Authorization": "Bearer \(key)",
            "Accept": "application/json",
            "User-Agent": "vane-cli/\(VaneVersion.current)",
        ]
        if body != nil { fields["Content-Type"] = "application/json" }
        for (name, value) in headers { fields[name] = value }
        let request = TransportRequest(method: method, url: url, headers: fields, body: body, timeout: timeout)
        let response: TransportResponse
        do {
            response = try await URLSessionTransport().send(request)
        } catch {
            switch error {
            case .timedOut: throw Failure.timedOut(server: server, seconds: timeout)
            case .cannotConnect(let reason), .connectionLost(let reason):
                throw Failure.cannotConnect(server: server, reason: reason)
            case .responseTooLarge:
                throw Failure.malformedResponse(server: server, reason: error.description)
            }
        }
        let reply = Reply(status: response.status, body: response.body, etag: response.header("ETag"))
        guard reply.status < 400 || answers.contains(reply.status) else { throw Self.failure(from: reply) }
        return reply
    }

    /// Reads Google's error envelope: `{"error": {"code", "status", "message", "details": [...]}}`.
    static func failure(from reply: Reply) -> Failure {
        guard let envelope = ErrorEnvelope(bytes: Array(reply.body)) else {
            let text = String(decoding: reply.body.prefix(300), as: UTF8.self)
            return .server(
                status: reply.status,
                canonicalStatus: nil,
                message: text.isEmpty ? "the server answered HTTP \(reply.status) without a message" : text,
                details: []
            )
        }
        return .server(
            status: reply.status,
            canonicalStatus: envelope.status.isEmpty ? nil : envelope.status,
            message: envelope.message,
            details: envelope.details.map { Failure.Detail(path: $0.path, severity: $0.severity, message: $0.message) }
        )
    }
}
