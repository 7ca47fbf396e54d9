import Foundation
import Hummingbird
import Logging
import VaneAuthoring
import VaneCore
import VaneServerCore

/// The template admin API, shaped like Firebase's REST API: get, publish (with ETags), versions,
/// rollback, diff and in-app defaults.
struct TemplateRoutes {
    let store: ConfigStore
    let cache: ServingCache
    let publisher: TemplatePublisher

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.get("template", use: getTemplate)
        group.put("template", use: publishTemplate)
        group.get("template/compiled", use: getCompiledTemplate)
        group.get("versions", use: listVersions)
        group.post("rollback", use: rollback)
        group.get("diff", use: diff)
        group.get("defaults", use: defaults)
    }

    /// The environment, checked to exist.
    func existingEnvironment(_ context: VaneRequestContext) async throws -> EnvironmentKey {
        let environment = try RequestReading.environment(context)
        try await store.requireEnvironment(environment)
        return environment
    }

    @Sendable func getTemplate(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        try context.requirePrincipal().require(.readTemplate(environment))
        _ = try await existingEnvironment(context)
        if let number = try RequestReading.queryInteger(request, "versionNumber", in: 1...Int64.max) {
            return templateResponse(
                try await template(environment, number: number),
                etag: ServedTemplate.etag(environment, version: number)
            )
        }
        guard
            let latest = try await store.latestVersion(
                projectId: environment.projectId,
                environmentId: environment.environmentId
            )
        else {
            return templateResponse(ConfigTemplate(), etag: ServedTemplate.etag(environment, version: 0))
        }
        return templateResponse(latest.template, etag: ServedTemplate.etag(environment, version: latest.number))
    }

    @Sendable func publishTemplate(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.publish(try RequestReading.environment(context)))
        let environment = try await existingEnvironment(context)
        let bytes = try await RequestReading.body(request, limit: ServerLimits.maximumTemplateBytes)
        let template: ConfigTemplate
        do {
            template = try ConfigTemplate(data: bytes)
        } catch {
            throw APIError.invalidArgument(
                "the template cannot be read: \(error.issues.count) problem(s)",
                details: error.issues
            )
        }
        let checked: CheckedTemplate
        do {
            checked = try publisher.check(template)
        } catch {
            throw APIError(error)
        }
        let expected = try expectedVersion(request, environment: environment)
        if RequestReading.validateOnly(request) {
            let current = try await store.currentVersionNumber(
                projectId: environment.projectId,
                environmentId: environment.environmentId
            )
            if let expected, expected != current {
                throw StorageError.versionConflict(expected: expected, current: current)
            }
            // Not published, so no version yet: what a caller sent as `version` is not echoed as
            // if it were one.
            var unpublished = template
            unpublished.version = nil
            return templateResponse(unpublished, etag: ServedTemplate.etag(environment, version: current) + "-0")
        }
        let served = try await publish(checked, to: environment, expectedVersion: expected, actor: principal.actor)
        // `vane publish` shows warnings before it sends; API callers' warnings reach the log.
        for issue in checked.issues {
            context.logger.notice(
                "published with a warning",
                metadata: ["environment": "\(environment)", "path": "\(issue.path)", "rule": "\(issue.rule)"]
            )
        }
        context.logger.info(
            "published",
            metadata: [
                "environment": "\(environment)", "version": "\(served.versionNumber)", "by": "\(principal.id)",
            ]
        )
        return JSONResponse.make(text: served.templateJSON, headers: [.eTag: served.etag])
    }

    /// Publishes through the ``TemplatePublisher``; its refusals answer as ``APIError``s.
    func publish(
        _ checked: CheckedTemplate,
        to environment: EnvironmentKey,
        expectedVersion: Int64?,
        actor: Actor,
        rollbackSource: Int64? = nil
    ) async throws -> ServedTemplate {
        try await publisher.publish(
            checked,
            to: environment,
            expectedVersion: expectedVersion,
            actor: actor,
            rollbackSource: rollbackSource
        )
    }

    /// The version an `If-Match` header names; nil for `*`. 412 when missing or for another environment.
    func expectedVersion(_ request: Request, environment: EnvironmentKey) throws(APIError) -> Int64? {
        guard let header = request.headers[.ifMatch] else {
            throw APIError.failedPrecondition(
                "If-Match is required: send the ETag from GET …/template, or * to overwrite whatever is published"
            )
        }
        return try Self.version(ifMatch: header, environment: environment)
    }

    /// The version an `If-Match` header's value names; nil for `*`. 412 for another environment.
    static func version(ifMatch header: String, environment: EnvironmentKey) throws(APIError) -> Int64? {
        let value = RequestReading.bareETag(header)
        if value == "*" { return nil }
        let prefix = ServedTemplate.etag(environment, version: 0).dropLast()
        guard value.hasPrefix(prefix), let number = Int64(value.dropFirst(prefix.count)) else {
            throw APIError.failedPrecondition(
                "If-Match \"\(value)\" is not an ETag of \(environment); GET the template for a current one"
            )
        }
        return number
    }

    @Sendable func getCompiledTemplate(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        try context.requirePrincipal().require(.readTemplate(environment))
        guard let served = cache.template(for: environment) else {
            _ = try await existingEnvironment(context)
            return templateResponse(ConfigTemplate(), etag: ServedTemplate.etag(environment, version: 0))
        }
        if request.headers.ifNoneMatch(matches: served.etag) {
            return Response(status: .notModified, headers: [.eTag: served.etag])
        }
        return JSONResponse.make(text: served.templateJSON, headers: [.eTag: served.etag])
    }

    @Sendable func listVersions(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try context.requirePrincipal().require(.readHistory(try RequestReading.environment(context)))
        let environment = try await existingEnvironment(context)
        var query = VersionQuery()
        if let size = try RequestReading.queryInteger(request, "pageSize", in: 1...300) { query.pageSize = Int(size) }
        query.pageToken = request.uri.queryParameters.get("pageToken").map { String($0) }
        // A page token is a version number; the page holds the versions below it.
        if let token = query.pageToken, (Int64(token) ?? 0) < 1 { throw StorageError.invalidPageToken(token) }
        query.startTime = try RequestReading.queryTime(request, "startTime")
        query.endTime = try RequestReading.queryTime(request, "endTime")
        query.endVersionNumber = try RequestReading.queryInteger(request, "endVersionNumber", in: 0...Int64.max)
        let page = try await store.versions(
            projectId: environment.projectId,
            environmentId: environment.environmentId,
            query: query
        )
        var object: JSONObject = ["versions": .array(page.items.map { .object($0.json()) })]
        if let next = page.nextPageToken { object["nextPageToken"] = .string(next) }
        return JSONResponse.make(.object(object))
    }

    @Sendable func rollback(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.publish(try RequestReading.environment(context)))
        let environment = try await existingEnvironment(context)
        let body = try await RequestReading.object(request)
        guard
            let number = try RequestReading.integer(
                body["versionNumber"] ?? body["version_number"],
                name: "versionNumber"
            )
        else {
            throw APIError.invalidArgument("\"versionNumber\" is required: the version to roll back to")
        }
        let reason = try RequestReading.optionalString(body, "reason")
        let flag = try RequestReading.optionalString(body, "flag")
        let served = try await publisher.rollback(
            environment,
            to: number,
            expectedVersion: nil,
            actor: principal.actor,
            reason: reason.flatMap { $0.isEmpty ? nil : $0 },
            flag: flag
        )
        return JSONResponse.make(text: served.templateJSON, headers: [.eTag: served.etag])
    }

    @Sendable func diff(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try context.requirePrincipal().require(.readHistory(try RequestReading.environment(context)))
        let environment = try await existingEnvironment(context)
        guard let from = try RequestReading.queryInteger(request, "from", in: 0...Int64.max),
            let to = try RequestReading.queryInteger(request, "to", in: 0...Int64.max)
        else {
            throw APIError.invalidArgument(
                "diff needs the query parameters from and to (version numbers; 0 is the empty template)"
            )
        }
        let old = try await template(environment, number: from)
        let new = try await template(environment, number: to)
        let diff = TemplateDiff(from: old, to: new)
        var json = diff.json()
        if case .object(var object) = json {
            object["from"] = .string(String(from))
            object["to"] = .string(String(to))
            object["summary"] = .array(diff.sentences(from: old, to: new).map { .string($0.description) })
            json = .object(object)
        }
        return JSONResponse.make(json)
    }

    func template(_ environment: EnvironmentKey, number: Int64) async throws -> ConfigTemplate {
        try await store.template(environment, number: number)
    }

    @Sendable func defaults(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        try context.requirePrincipal().require(.readTemplate(environment))
        _ = try await existingEnvironment(context)
        let template = try await store.latestVersion(
            projectId: environment.projectId,
            environmentId: environment.environmentId
        )?.template
        let defaults = (template ?? ConfigTemplate()).defaultValues
        let format = (request.uri.queryParameters.get("format").map { String($0) } ?? "json").lowercased()
        switch format {
        case "json":
            return JSONResponse.make(defaults.json())
        case "plist":
            return Response(
                status: .ok,
                headers: [.contentType: "application/x-plist"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: DefaultsFile.propertyList(defaults)))
            )
        case "xml":
            return Response(
                status: .ok,
                headers: [.contentType: "application/xml; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: DefaultsFile.androidXML(defaults)))
            )
        default:
            throw APIError.invalidArgument("format must be json, plist or xml, found \"\(format)\"")
        }
    }

    func templateResponse(_ template: ConfigTemplate, etag: String) -> Response {
        JSONResponse.make(text: template.serialized(.compact), headers: [.eTag: etag])
    }
}

/// In-app defaults files for Apple (property list) and Android (XML).
enum DefaultsFile {
    static func propertyList(_ defaults: InAppDefaults) -> String {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>

            """
        for entry in defaults.entries {
            text += "\t<key>\(escape(entry.key))</key>\n\t<string>\(escape(entry.value.stringValue))</string>\n"
        }
        return text + "</dict>\n</plist>\n"
    }

    static func androidXML(_ defaults: InAppDefaults) -> String {
        var text = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<defaultsMap>\n"
        for entry in defaults.entries {
            text +=
                "    <entry>\n        <key>\(escape(entry.key))</key>\n        <value>\(escape(entry.value.stringValue))</value>\n    </entry>\n"
        }
        return text + "</defaultsMap>\n"
    }

    static func escape(_ text: String) -> String {
        MarkupEscaping.escaped(text)
    }
}
