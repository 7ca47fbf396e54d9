import VaneAuthoring
import VaneServerCore

/// The review page's conflicts, field by field, each with its choice of "Keep mine" or "Take live",
/// and the form that settles them. The merge and what a choice does are ``TemplateRebasing``'s,
/// the same as the API's `POST …/template/rebase`; this is only how the console shows and reads them.
struct ConflictResolution: Sendable {
    /// One conflicting field and its choice.
    struct Field: Sendable {
        var field: String
        var base: String
        var theirs: String
        var ours: String
        /// The form field of its choice.
        var input: String
        /// What keeping mine reverts of the live version, said before it is taken.
        var revert: String?
    }

    /// A flag, condition or the template's settings, with its conflicting fields.
    struct Subject: Sendable {
        var title: String
        var fields: [Field]
    }

    var subjects: [Subject]

    init(_ conflicts: [TemplateMerge.Conflict]) {
        subjects = conflicts.enumerated().map { index, conflict in
            Subject(
                title: Self.title(of: conflict.subject),
                fields: conflict.fields.enumerated().map { number, field in
                    Field(
                        field: field.field,
                        base: field.base.map(DiffView.pretty) ?? "(none)",
                        theirs: field.theirs.map(DiffView.pretty) ?? "(none)",
                        ours: field.ours.map(DiffView.pretty) ?? "(none)",
                        input: Self.input(index, number),
                        revert: TemplateRebasing.Revert(subject: conflict.subject, conflict: field, result: field.ours)?
                            .message
                    )
                }
            )
        }
    }

    /// The choices the form made, one for each conflicting field of `conflicts`.
    /// - Throws: ``ConsolePageError/badRequest(_:)`` naming the first field without a choice.
    static func choices(
        for conflicts: [TemplateMerge.Conflict],
        in form: ConsoleForm
    ) throws -> [TemplateMerge.FieldKey: TemplateRebasing.Choice] {
        var choices: [TemplateMerge.FieldKey: TemplateRebasing.Choice] = [:]
        for (index, conflict) in conflicts.enumerated() {
            for (number, field) in conflict.fields.enumerated() {
                let choice: TemplateRebasing.Choice
                switch form.text(input(index, number)) {
                case "mine": choice = .mine
                case "theirs": choice = .theirs
                default:
                    throw ConsolePageError.badRequest(
                        "choose mine or live for every conflicting field; \(title(of: conflict.subject)) \(field.field) has no choice"
                    )
                }
                choices[TemplateMerge.FieldKey(subject: conflict.subject, field: field.field)] = choice
            }
        }
        return choices
    }

    /// `choice-<conflict>-<field>`.
    static func input(_ conflict: Int, _ field: Int) -> String { "choice-\(conflict)-\(field)" }

    static func title(of subject: TemplateMerge.Conflict.Subject) -> String {
        switch subject {
        case .parameter(let key): "Flag \(key)"
        case .condition(let name): "Condition \(name)"
        case .conditionOrder: "The order of the conditions"
        case .settings: "Template settings"
        }
    }
}
