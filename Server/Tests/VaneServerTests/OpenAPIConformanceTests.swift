import Foundation
import HTTPTypes
import Testing
import VaneCore
import Yams

@testable import VaneServer
@testable import VaneServerCore

/// Checks the server against `docs/openapi.yaml`: every documented operation is served, every
/// answer's status is documented for it, and JSON answers carry their schema's required members.
@Suite(.timeLimit(.minutes(5))) struct OpenAPIConformanceTests {
    struct Operation: CustomStringConvertible, Sendable {
        let method: HTTPRequest.Method
        let path: String
        let operationId: String
        let statuses: Set<Int>
        let hasDefault: Bool
        /// Per documented status with a JSON object schema: the members it requires.
        let requiredMembers: [Int: [String]]

        var description: String { "\(operationId) (\(method) \(path))" }
    }

    static let specURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml")

    static func spec() throws -> [String: Any] {
        let text = try String(contentsOf: specURL, encoding: .utf8)
        guard let spec = try Yams.load(yaml: text) as? [String: Any] else {
            throw TestSetupError("openapi.yaml is not a mapping")
        }
        return spec
    }

    static func operations(_ spec: [String: Any]) -> [Operation] {
        var operations: [Operation] = []
        let paths = spec["paths"] as? [String: Any] ?? [:]
        for (path, item) in paths.sorted(by: { $0.key < $1.key }) {
            guard let item = item as? [String: Any] else { continue }
            for (name, method) in [
                ("get", HTTPRequest.Method.get), ("put", .put), ("post", .post), ("delete", .delete),
            ] {
                guard let operation = item[name] as? [String: Any] else { continue }
                let responses = operation["responses"] as? [String: Any] ?? [:]
                var required: [Int: [String]] = [:]
                for (status, response) in responses {
                    guard let code = Int(status), let response = resolve(response, in: spec) as? [String: Any],
                        let content = response["content"] as? [String: Any],
                        let json = content.first(where: { $0.key.hasPrefix("application/json") })?.value
                            as? [String: Any],
                        let schema = json["schema"]
                    else { continue }
                    required[code] = requiredMembers(resolve(schema, in: spec) as? [String: Any] ?? [:], in: spec)
                }
                operations.append(
                    Operation(
                        method: method,
                        path: path,
                        operationId: operation["operationId"] as? String ?? "?",
                        statuses: Set(responses.keys.compactMap(Int.init)),
                        hasDefault: responses["default"] != nil,
                        requiredMembers: required
                    )
                )
            }
        }
        return operations
    }

    /// Follows a local `$ref`.
    static func resolve(_ value: Any, in spec: [String: Any]) -> Any {
        guard let object = value as? [String: Any], let reference = object["$ref"] as? String, reference.hasPrefix("#/")
        else { return value }
        var current: Any = spec
        for component in reference.dropFirst(2).split(separator: "/") {
            guard let next = (current as? [String: Any])?[String(component)] else { return value }
            current = next
        }
        return resolve(current, in: spec)
    }

    /// A request that exercises the operation on the demo project.
    static func sample(_ operation: Operation) -> (path: String, body: JSONValue?, headers: HTTPFields) {
        var path = operation.path
            .replacingOccurrences(of: "{project}", with: "demo")
            .replacingOccurrences(of: "{environment}", with: "production")
            .replacingOccurrences(of: "{id}", with: "k_000000000000")
            .replacingOccurrences(of: "{key}", with: "banner_text")
            .replacingOccurrences(of: "{experiment}", with: "conformance")
            .replacingOccurrences(of: "{name}", with: "germany_austria")
            .replacingOccurrences(of: "{request}", with: "cr_000000000000")
            .replacingOccurrences(of: "{webhook}", with: "ep_000000000000")
            .replacingOccurrences(of: "{message}", with: "msg_000000000000")
            .replacingOccurrences(of: "{rollout}", with: "conformance")
        var headers: HTTPFields = [:]
        var body: JSONValue?
        switch operation.operationId {
        case "createProject": body = ["id": "conformance", "name": "Conformance"]
        case "createEnvironment": body = ["id": "conformance"]
        case "publishTemplate":
            body = ["parameters": ["banner_text": ["defaultValue": ["value": "hello"]]]]
            headers[.ifMatch] = "*"
        case "rollbackTemplate": body = ["versionNumber": "1"]
        case "rebaseTemplate":
            body = [
                "baseVersion": "0", "template": ["parameters": ["banner_text": ["defaultValue": ["value": "hello"]]]],
            ]
        case "diffVersions": path += "?from=1&to=2"
        case "createApiKey":
            body = ["name": "conformance", "role": "client", "project": "demo", "environment": "production"]
        // Refused: the server does not call into its own network unless told to.
        case "createWebhook": body = ["url": "http://127.0.0.1:9/hook"]
        case "fetchConfig": body = ["context": ["randomizationId": "user-1"]]
        case "sendEvents": body = ["events": []]
        case "createExperiment":
            body = [
                "key": "conformance", "parameters": ["banner_text"],
                "variants": [["name": "control", "weight": 1], ["name": "b", "condition": "b", "weight": 1]],
                "primaryMetric": ["event": "checkout_completed", "kind": "conversion"],
            ]
        case "createRollout":
            body = [
                "id": "conformance", "parameters": [["key": "banner_text", "value": "rolled"]],
                "guardrails": [["event": "app_crashed", "kind": "conversion", "bad": "increase"]],
            ]
        default: break
        }
        if operation.path.hasPrefix("/ofrep/") {
            body = ["context": ["targetingKey": "user-1"]]
            headers[HTTPField.Name("X-Vane-Project")!] = "demo"
            headers[HTTPField.Name("X-Vane-Environment")!] = "production"
        }
        return (path, body, headers)
    }

    /// The members a schema requires, when it is a plain object schema.
    static func requiredMembers(_ schema: [String: Any], in spec: [String: Any]) -> [String] {
        if let all = schema["allOf"] as? [Any] {
            return all.flatMap { requiredMembers(resolve($0, in: spec) as? [String: Any] ?? [:], in: spec) }
        }
        return schema["required"] as? [String] ?? []
    }

    @Test func everyDocumentedOperationIsServedWithADocumentedAnswer() async throws {
        let spec = try Self.spec()
        let operations = Self.operations(spec)
        #expect(operations.count >= 20, "openapi.yaml lists only \(operations.count) operations")
        try await TestServer.run(.sqlite) { server in
            // Publish once more, so that diff 1 → 2 and rollback to 1 have something to work on.
            try await server.publish(["parameters": ["banner_text": ["defaultValue": ["value": "v2"]]]])
            for operation in operations {
                let (path, body, headers) = Self.sample(operation)
                // An event stream never ends: ask with a wrong key, which proves it is served and
                // answers a documented status (vaneTests.EventStreamTests reads real streams).
                let key = operation.operationId == "streamVersions" ? "vane_client_wrong" : TestServer.adminKey
                let reply = try await server.send(operation.method, path, key: key, json: body, headers: headers)
                let status = Int(reply.status.code)
                #expect(
                    operation.statuses.contains(status) || operation.hasDefault,
                    "\(operation) answered \(status), which openapi.yaml does not document: \(reply.text.prefix(200))"
                )
                // Hummingbird answers an unknown route with an empty 404; Vane's own 404s have a body.
                #expect(!(status == 404 && reply.text.isEmpty), "\(operation) is documented but not served")
                if let required = operation.requiredMembers[status], let object = reply.object {
                    for member in required {
                        #expect(
                            object[member] != nil,
                            "\(operation) answered \(status) without required member \"\(member)\""
                        )
                    }
                }
            }
        }
    }

    /// The audit log's documented actions are exactly those the server records.
    @Test func theDocumentedAuditActionsAreTheRecordedOnes() throws {
        let spec = try Self.spec()
        let schemas = (spec["components"] as? [String: Any])?["schemas"] as? [String: Any]
        let entry = schemas?["AuditEntry"] as? [String: Any]
        let action = (entry?["properties"] as? [String: Any])?["action"] as? [String: Any]
        let documented = try #require(action?["enum"] as? [String], "AuditEntry.action has no enum")
        #expect(Set(documented) == Set(AuditAction.allCases.map(\.rawValue)))
    }

}
