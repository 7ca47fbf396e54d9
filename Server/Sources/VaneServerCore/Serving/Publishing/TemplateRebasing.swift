package import VaneAuthoring
package import VaneCore

/// The one way a template written on an older version is brought onto the live one, for the
/// console's review page and the API's `POST …/template/rebase` alike: the three-way merge
/// (``TemplateMerge``, field by field) of the changes the proposed template made since its base
/// version into the live version, with per-field choices settling the conflicts. A choice that
/// overrides what was published since the base is listed as a ``Revert``, so a client can ask
/// before it takes it.
package struct TemplateRebasing: Sendable {
    package let store: ConfigStore
    package let publisher: TemplatePublisher

    package init(store: ConfigStore, publisher: TemplatePublisher) {
        self.store = store
        self.publisher = publisher
    }

    /// How one conflicting field is settled.
    package enum Choice: Sendable, Hashable {
        /// The proposed template's side.
        case mine
        /// The live side.
        case theirs
        /// A value of its own (see ``TemplateMerge/Resolution/value(_:)`` for what each field takes).
        case value(JSONValue)

        var resolution: TemplateMerge.Resolution {
            switch self {
            case .mine: .ours
            case .theirs: .theirs
            case .value(let value): .value(value)
            }
        }
    }

    /// A settled field whose result replaces what was published since the base version.
    package struct Revert: Sendable, Hashable {
        package var subject: TemplateMerge.Conflict.Subject
        package var field: String
        /// The field before the live change; nil when absent.
        package var base: String?
        /// The field as live now.
        package var theirs: String?
        /// What the field becomes.
        package var result: String?

        /// `reverts live change: banner_text defaultValue "Welcome" → "Hello" (becomes "Hi")`.
        package var message: String {
            let becomes = result == base ? "" : " (becomes \(result ?? "none"))"
            return "reverts live change: \(TemplateRebasing.name(of: subject)) \(field) "
                + "\(base ?? "none") → \(theirs ?? "none")\(becomes)"
        }

        /// The revert of taking `result` for a conflicting field; nil when the result is what is live.
        package init?(subject: TemplateMerge.Conflict.Subject, conflict: TemplateMerge.FieldConflict, result: String?) {
            guard result != conflict.theirs else { return nil }
            self.subject = subject
            field = conflict.field
            base = conflict.base
            theirs = conflict.theirs
            self.result = result
        }
    }

    /// What rebasing gives.
    package enum Outcome: Sendable {
        /// The merged template (its `version` is the live one's), and what the choices revert.
        case merged(ConfigTemplate, reverts: [Revert])
        /// The conflicts no choice settled.
        case conflicts([TemplateMerge.Conflict])
    }

    /// Rebases `proposed`, written on `baseVersion`, onto the live version of `environment`.
    /// - Parameter baseVersion: The version the template started from; 0 is the empty template.
    /// - Returns: The outcome and the live version it was made on.
    /// - Throws: ``RebaseRefusal`` for a base after the live version or a choice that does not
    ///   fit; ``StorageError/versionNotFound(_:)`` and other storage errors.
    package func rebase(
        _ environment: EnvironmentKey,
        baseVersion: Int64,
        proposed: ConfigTemplate,
        choices: [TemplateMerge.FieldKey: Choice]
    ) async throws -> (outcome: Outcome, liveVersion: Int64) {
        let live = try await publisher.liveTemplate(environment)
        guard baseVersion <= live.version else {
            throw RebaseRefusal.baseAfterLive(base: baseVersion, live: live.version)
        }
        let base =
            baseVersion == live.version ? live.template : try await store.template(environment, number: baseVersion)
        let outcome = try Self.rebase(proposed, base: base, live: live.template, choices: choices)
        return (outcome, live.version)
    }

    /// The merge itself, for a caller that has the three templates at hand.
    /// - Throws: ``RebaseRefusal`` for a choice for a field that does not conflict, or a value
    ///   the field cannot take.
    package static func rebase(
        _ proposed: ConfigTemplate,
        base: ConfigTemplate,
        live: ConfigTemplate,
        choices: [TemplateMerge.FieldKey: Choice]
    ) throws(RebaseRefusal) -> Outcome {
        let merge = TemplateMerge(
            base: base,
            theirs: live,
            ours: proposed,
            resolving: choices.mapValues(\.resolution)
        )
        if let refused = merge.refusedResolutions.first {
            throw .choice(name(of: refused.key.subject), field: refused.key.field, refused.reason)
        }
        if let unused = merge.unusedResolutions.first {
            throw .noConflict(name(of: unused.subject), field: unused.field)
        }
        guard let merged = merge.merged else { return .conflicts(merge.conflicts) }
        let reverts = merge.settled.compactMap {
            Revert(subject: $0.subject, conflict: $0.conflict, result: $0.result)
        }
        return .merged(merged, reverts: reverts)
    }

    /// A subject as people read it: the flag's key, `condition beta`, `condition order`, `settings`.
    package static func name(of subject: TemplateMerge.Conflict.Subject) -> String {
        switch subject {
        case .parameter(let key): key
        case .condition(let name): "condition \(name)"
        case .conditionOrder: "condition order"
        case .settings: "settings"
        }
    }
}

/// Why a rebase was refused; each case says what to do instead.
package enum RebaseRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    case baseAfterLive(base: Int64, live: Int64)
    case noConflict(String, field: String)
    case choice(String, field: String, String)

    package var description: String {
        switch self {
        case .baseAfterLive(let base, let live):
            "base version \(base) is after the live version \(live); give the version the template was written on"
        case .noConflict(let subject, let field):
            "there is no conflict on \(subject) \(field) to choose for; rebase without that choice"
        case .choice(let subject, let field, let reason):
            "the choice for \(subject) \(field) does not fit: \(reason)"
        }
    }
}
