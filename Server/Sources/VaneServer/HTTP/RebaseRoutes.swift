import Hummingbird
import VaneAuthoring
import VaneCore
import VaneServerCore

/// `POST …/template/rebase`: a template written on an older version brought onto the live one by
/// the same per-field merge and choices as the console's review page (``TemplateRebasing``).
/// Publishes nothing: 200 with the merged template and the live changes the choices revert, or
/// 409 with the conflicts left to choose for.
struct RebaseRoutes {
    let rebasing: TemplateRebasing

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.post("template/rebase", use: rebase)
    }

    @Sendable func rebase(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        try context.requirePrincipal().require(.readTemplate(environment))
        let body = try RequestReading.object(
            parsing: try await RequestReading.body(
                request,
                limit: ServerLimits.maximumTemplateBytes + ServerLimits.maximumSmallBodyBytes
            )
        )
        guard let baseVersion = try RequestReading.integer(body["baseVersion"], name: "baseVersion"), baseVersion >= 0
        else {
            throw APIError.invalidArgument(
                "\"baseVersion\" is required: the version the template was written on (0 for the empty template)"
            )
        }
        guard case .object(let templateJSON)? = body["template"] else {
            throw APIError.invalidArgument("\"template\" is required: the template written on baseVersion, an object")
        }
        let proposed: ConfigTemplate
        do {
            proposed = try ConfigTemplate(json: .object(templateJSON))
        } catch {
            throw APIError.invalidArgument(
                "the template cannot be read: \(error.issues.count) problem(s)",
                details: error.issues.map {
                    ValidationIssue(
                        $0.severity,
                        at: JSONPath.root.appending("template").appending($0.path),
                        rule: $0.rule,
                        $0.message
                    )
                }
            )
        }
        let choices = try Self.choices(body["choices"])
        let result = try await rebasing.rebase(
            environment,
            baseVersion: baseVersion,
            proposed: proposed,
            choices: choices
        )
        let live = JSONValue.string(String(result.liveVersion))
        let etag = ServedTemplate.etag(environment, version: result.liveVersion)
        switch result.outcome {
        case .merged(let template, let reverts):
            let body: JSONValue = [
                "template": template.json(), "liveVersion": live, "reverts": .array(reverts.map(Self.json)),
            ]
            return JSONResponse.make(body, headers: [.eTag: etag])
        case .conflicts(let conflicts):
            let fields = conflicts.flatMap { conflict in conflict.fields.map { Self.json(conflict.subject, $0) } }
            let body: JSONValue = [
                "message": .string(
                    "\(fields.count) field(s) changed differently on both sides; choose mine, theirs or a value for each and rebase again"
                ),
                "liveVersion": live,
                "conflicts": .array(fields),
            ]
            return JSONResponse.make(body, status: .conflict, headers: [.eTag: etag])
        }
    }

    /// `kind` and, for a flag or condition, `name`.
    static func subjectMembers(_ subject: TemplateMerge.Conflict.Subject) -> JSONObject {
        switch subject {
        case .parameter(let key): ["kind": "parameter", "name": .string(key)]
        case .condition(let name): ["kind": "condition", "name": .string(name)]
        case .conditionOrder: ["kind": "conditionOrder"]
        case .settings: ["kind": "settings"]
        }
    }

    static func json(_ subject: TemplateMerge.Conflict.Subject, _ field: TemplateMerge.FieldConflict) -> JSONValue {
        var object = subjectMembers(subject)
        object["field"] = .string(field.field)
        object["base"] = field.base.map(JSONValue.string) ?? .null
        object["mine"] = field.ours.map(JSONValue.string) ?? .null
        object["theirs"] = field.theirs.map(JSONValue.string) ?? .null
        return .object(object)
    }

    static func json(_ revert: TemplateRebasing.Revert) -> JSONValue {
        var object = subjectMembers(revert.subject)
        object["field"] = .string(revert.field)
        object["base"] = revert.base.map(JSONValue.string) ?? .null
        object["theirs"] = revert.theirs.map(JSONValue.string) ?? .null
        object["result"] = revert.result.map(JSONValue.string) ?? .null
        object["message"] = .string(revert.message)
        return .object(object)
    }

    /// The `choices` member: an array of `{kind, name, field, take}` or `{kind, name, field, value}`.
    static func choices(_ value: JSONValue?) throws(APIError) -> [TemplateMerge.FieldKey: TemplateRebasing.Choice] {
        guard let value, value != .null else { return [:] }
        guard case .array(let items) = value else {
            throw APIError.invalidArgument("\"choices\" must be an array, found \(value.kindDescription)")
        }
        var choices: [TemplateMerge.FieldKey: TemplateRebasing.Choice] = [:]
        for (index, item) in items.enumerated() {
            let at = "choices[\(index)]"
            guard case .object(let object) = item else {
                throw APIError.invalidArgument("\(at) must be an object, found \(item.kindDescription)")
            }
            func text(_ member: String) throws(APIError) -> String? {
                switch object[member] {
                case nil, .null?: return nil
                case .string(let text)?: return text
                case let other?:
                    throw APIError.invalidArgument("\(at).\(member) must be a string, found \(other.kindDescription)")
                }
            }
            let name = try text("name")
            let subject: TemplateMerge.Conflict.Subject
            switch (try text("kind"), name) {
            case ("parameter", let name?): subject = .parameter(name)
            case ("condition", let name?): subject = .condition(name)
            case ("conditionOrder", _): subject = .conditionOrder
            case ("settings", _): subject = .settings
            case ("parameter", nil), ("condition", nil):
                throw APIError.invalidArgument("\(at).name is required for a parameter or condition")
            case (let kind, _):
                throw APIError.invalidArgument(
                    "\(at).kind must be parameter, condition, conditionOrder or settings, found \(kind.map { "\"\($0.prefix(40))\"" } ?? "none")"
                )
            }
            guard let field = try text("field") else {
                throw APIError.invalidArgument("\(at).field is required: the conflict's field, such as defaultValue")
            }
            let choice: TemplateRebasing.Choice
            switch (try text("take"), object["value"]) {
            case ("mine", nil): choice = .mine
            case ("theirs", nil): choice = .theirs
            case (nil, let value?): choice = .value(value)
            default:
                throw APIError.invalidArgument(
                    "\(at) needs either \"take\": \"mine\" or \"theirs\", or a \"value\" of its own"
                )
            }
            let key = TemplateMerge.FieldKey(subject: subject, field: field)
            guard choices.updateValue(choice, forKey: key) == nil else {
                throw APIError.invalidArgument("\(at) chooses again for \(TemplateRebasing.name(of: subject)) \(field)")
            }
        }
        return choices
    }
}
