package import Logging
import VaneAuthoring
package import VaneCore

/// A template that passed validation, its conditions parsed once: what
/// ``TemplatePublisher/publish(_:to:expectedVersion:actor:rollbackSource:)`` takes.
package struct CheckedTemplate: Sendable {
    /// The template and its parsed conditions.
    package let parsed: ParsedTemplate
    /// What validation found: warnings only (errors refuse the template); empty when it was not
    /// validated.
    package let issues: [ValidationIssue]
}

/// Why a version was not published.
package enum PublishError: Error, Sendable, Equatable {
    /// Validation found errors; every issue, warnings too, for the answer.
    case invalid([ValidationIssue])
    /// A condition does not parse: a version checked without validation (a rollback to a version
    /// this server cannot read any more).
    case doesNotCompile(TemplateCompilationError)
    /// The store refused it: a version conflict, a missing environment.
    case storage(StorageError)
    /// A rollback to a version that is not before the current one.
    case invalidRollback(String)
    /// The environment's change policy refused it (docs/GOVERNANCE.md).
    case changeRefused(ChangeRefusal)
}

/// The one way a template version goes live on this node: parse once → validate → compile →
/// store (one transaction) → install in the ``ServingCache`` → announce to ``PublishEvents``.
///
/// A version is compiled before it is stored, so every stored version compiles and every node
/// can serve it. Versions stored elsewhere (another node, an earlier run) come in through
/// ``adopt(_:announce:)``, ``catchUp()`` and ``loadAll()``: parsed once, compiled, installed.
package final class TemplatePublisher: Sendable {
    package let store: ConfigStore
    package let cache: ServingCache
    package let events: PublishEvents
    package let logger: Logger

    package init(store: ConfigStore, cache: ServingCache, events: PublishEvents, logger: Logger) {
        self.store = store
        self.cache = cache
        self.events = events
        self.logger = logger
    }

    /// The live template of an existing environment and its version, from the serving cache when
    /// it holds the current version (no decode of a large template), else from the store.
    /// - Throws: ``StorageError/environmentNotFound`` and other storage errors.
    package func liveTemplate(_ environment: EnvironmentKey) async throws -> (template: ConfigTemplate, version: Int64)
    {
        try await store.requireEnvironment(environment)
        let number = try await store.currentVersionNumber(
            projectId: environment.projectId,
            environmentId: environment.environmentId
        )
        if let served = cache.template(for: environment), served.versionNumber == number {
            return (served.compiled.template, number)
        }
        return try await store.liveTemplate(environment)
    }

    /// Parses a template once and validates it.
    /// - Parameter validating: False for a version published before (a rollback): its conditions
    ///   are parsed, not judged again by today's rules.
    /// - Throws: ``PublishError/invalid(_:)`` when validation finds an error.
    package func check(_ template: ConfigTemplate, validating: Bool = true) throws(PublishError) -> CheckedTemplate {
        let parsed = ParsedTemplate(template)
        guard validating else { return CheckedTemplate(parsed: parsed, issues: []) }
        let issues = parsed.validate()
        if issues.contains(where: { $0.severity == .error }) { throw .invalid(issues) }
        return CheckedTemplate(parsed: parsed, issues: issues)
    }

    /// Publishes an earlier version's template again as the next version, or, with `flag`, the
    /// live template with only that flag as it was in the earlier version.
    ///
    /// A whole copy is parsed and compiled but not validated again: it was published once, and
    /// today's rules must not stand between an operator and the last version that worked. A
    /// one-flag rollback is a new combination (live + that flag's old definition, with the
    /// conditions it needs that live lacks appended at the end; a flag the old version did not
    /// have is removed), so it is validated like any publish.
    /// - Parameters:
    ///   - number: The version to copy, before the current one.
    ///   - expectedVersion: The version the caller saw as current; nil rolls back whatever is live
    ///     (a one-flag rollback then expects the live version it read).
    ///   - reason: Why, for the version's description and the audit entry.
    ///   - flag: The one flag to restore; nil restores the whole template.
    ///   - authorization: What allows it under the change policy.
    /// - Throws: ``PublishError``; database failures as they come.
    @discardableResult
    package func rollback(
        _ environment: EnvironmentKey,
        to number: Int64,
        expectedVersion: Int64?,
        actor: Actor,
        reason: String? = nil,
        flag: String? = nil,
        authorization: ChangeAuthorization = .direct("the rollback")
    ) async throws -> ServedTemplate {
        let current = try await store.currentVersionNumber(
            projectId: environment.projectId,
            environmentId: environment.environmentId
        )
        guard number >= 1, number < current else {
            throw PublishError.invalidRollback(
                "can only roll back to a version before the current one (\(current)), not \(number)"
            )
        }
        guard
            let old = try await store.version(
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                number: number
            )?.template
        else { throw PublishError.storage(.versionNotFound(number)) }
        let note = RollbackNote(reason: reason, flag: flag)
        guard let flag else {
            var template = old
            template.version = TemplateVersion(
                description: "Rollback to version \(number)" + (reason.map { ": \($0)" } ?? "")
            )
            return try await publish(
                try check(template, validating: false),
                to: environment,
                expectedVersion: expectedVersion,
                actor: actor,
                rollbackSource: number,
                rollbackNote: note,
                authorization: authorization
            )
        }
        let live = try await liveTemplate(environment)
        var template = try Self.restoring(flag, from: old, version: number, onto: live.template)
        template.version = TemplateVersion(
            description: "Rollback of \(flag) to version \(number)" + (reason.map { ": \($0)" } ?? "")
        )
        return try await publish(
            try check(template),
            to: environment,
            expectedVersion: expectedVersion ?? live.version,
            actor: actor,
            rollbackSource: number,
            rollbackNote: note,
            authorization: authorization
        )
    }

    /// `live` with the parameter `key` as `old` has it: replaced, added (with the conditions it
    /// needs that `live` lacks, at the end of the order) or removed.
    /// - Throws: ``PublishError/invalidRollback(_:)`` when neither has the flag or nothing changes.
    package static func restoring(
        _ key: String,
        from old: ConfigTemplate,
        version number: Int64,
        onto live: ConfigTemplate
    ) throws(PublishError) -> ConfigTemplate {
        var template = live
        if let parameter = old.parameter(forKey: key) {
            if let replaced = TemplateEdits.replacing(parameter, in: template) {
                template = replaced
            } else {
                template.parameters.append(parameter)
            }
            for value in parameter.conditionalValues where template.condition(named: value.conditionName) == nil {
                if let condition = old.condition(named: value.conditionName) { template.conditions.append(condition) }
            }
        } else if let removed = TemplateEdits.removing(key, from: template) {
            template = removed
        } else {
            throw .invalidRollback("neither version \(number) nor the live template has a flag \"\(key)\"")
        }
        guard TemplateDiff(from: live, to: template).isEmpty == false else {
            throw .invalidRollback("\(key) is the same in version \(number) as live; there is nothing to roll back")
        }
        return template
    }

    /// Compiles a checked template, stores it as the environment's next version, serves it on
    /// this node and announces it.
    /// - Parameters:
    ///   - expectedVersion: The version the publisher read (from its ETag); nil forces the publish.
    ///   - rollbackSource: For a rollback, the version copied.
    ///   - rollbackNote: For a rollback, its reason and the one flag it restores, if only one.
    ///   - authorization: What allows it under the environment's change policy, checked in the
    ///     publish transaction: every path publishes directly except an approved change request
    ///     (``ChangeRequestApplying``) and the kill switch.
    ///   - change: What webhooks are told when it is more than a publish or rollback (a kill switch).
    ///   - alongside: Work that commits with the version or not at all (a rollout's step).
    ///   - kind: The change request kind the change policy checks, when not `template` or
    ///     `rollback` (a rollout's start: `rollout_start`).
    /// - Throws: ``PublishError``; database failures as they come.
    @discardableResult
    package func publish(
        _ checked: CheckedTemplate,
        to environment: EnvironmentKey,
        expectedVersion: Int64?,
        actor: Actor,
        rollbackSource: Int64? = nil,
        rollbackNote: RollbackNote? = nil,
        authorization: ChangeAuthorization = .direct("the publish"),
        change: WebhookChange? = nil,
        alongside: PublishAlongside? = nil,
        kind: String? = nil
    ) async throws -> ServedTemplate {
        let compiled: CompiledTemplate
        do {
            compiled = try CompiledTemplate(checked.parsed)
        } catch {
            throw PublishError.doesNotCompile(error)
        }
        let stored: StoredVersion
        do {
            stored = try await store.publish(
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                template: checked.parsed.template,
                expectedVersion: expectedVersion,
                actor: actor,
                rollbackSource: rollbackSource,
                rollbackNote: rollbackNote,
                authorization: authorization,
                change: change,
                alongside: alongside,
                kind: kind
            )
        } catch let error as StorageError {
            throw PublishError.storage(error)
        } catch let refusal as ChangeRefusal {
            throw PublishError.changeRefused(refusal)
        }
        // The store stamped the version metadata; the compiled tables stay as they are.
        let served = ServedTemplate(
            environment: environment,
            number: stored.number,
            parsed: checked.parsed,
            compiled: compiled.replacingVersion(stored.template.version),
            templateJSON: stored.templateJSON,
            experiments: cache.experiments(for: environment)
        )
        serve(served, announce: true)
        return served
    }

    /// Serves a version stored elsewhere (another node, an earlier run) and, unless `announce`
    /// is false, tells this node's streams.
    /// - Throws: ``TemplateCompilationError`` for a stored template that does not compile.
    @discardableResult
    package func adopt(
        _ version: StoredVersion,
        announce: Bool = true
    ) throws(TemplateCompilationError) -> ServedTemplate {
        let served = try ServedTemplate(
            version,
            experiments: cache.experiments(
                for: EnvironmentKey(projectId: version.projectId, environmentId: version.environmentId)
            )
        )
        serve(served, announce: announce)
        return served
    }

    /// Serves every version newer than this node's, one read of version numbers first: the body
    /// of the version poller and the version listener.
    package func catchUp() async throws {
        let served = cache.versionNumbers
        for (environment, number) in try await store.currentVersionNumbers() where (served[environment] ?? 0) < number {
            guard
                let version = try await store.latestVersion(
                    projectId: environment.projectId,
                    environmentId: environment.environmentId
                )
            else { continue }
            adoptLogging(version, announce: true)
        }
    }

    /// Serves the newest version of every environment, at start-up (nobody listens yet, so
    /// nothing is announced).
    package func loadAll() async throws {
        let served = cache.versionNumbers
        for version in try await store.allLatestVersions() {
            let environment = EnvironmentKey(projectId: version.projectId, environmentId: version.environmentId)
            // Published during this start (the demo project): already served.
            if let number = served[environment], number >= version.number { continue }
            adoptLogging(version, announce: false)
        }
    }

    /// Adopts a version; one that does not compile is logged and skipped, so it cannot keep the
    /// other environments from being served.
    private func adoptLogging(_ version: StoredVersion, announce: Bool) {
        do {
            try adopt(version, announce: announce)
        } catch {
            logger.error(
                "stored template does not compile; not served",
                metadata: [
                    "environment": "\(version.projectId)/\(version.environmentId)", "version": "\(version.number)",
                    "error": "\(error)",
                ]
            )
        }
    }

    private func serve(_ served: ServedTemplate, announce: Bool) {
        cache.install(served)
        if announce { events.published(served.environment, version: served.versionNumber) }
    }
}
