import VaneAuthoring
import VaneCore
import VaneServerCore

/// Drafts: what editors change collects in a draft of the environment's template kept on the
/// server, one per person per environment, until it is reviewed and published.
extension ConsoleRoutes {
    /// What a person works on in an environment: their draft, or the live template when they
    /// have none yet (the first edit starts a draft from it).
    struct WorkingCopy: Sendable {
        /// The template being edited: the draft's, or the live one.
        var template: ConfigTemplate
        /// The live version the edits started from.
        var baseVersion: Int64
        /// The live template now.
        var live: ConfigTemplate
        /// The live version now; differs from ``baseVersion`` when someone published since the
        /// draft was started.
        var liveVersion: Int64
        /// The stored draft, if there is one.
        var draft: Draft?
        /// The live template with its conditions parsed, when this node's serving cache holds
        /// the live version (to parse a draft's unchanged conditions only once).
        var liveParsed: ParsedTemplate?

        /// `template` with its conditions parsed, reusing the live version's parsed conditions
        /// where they are unchanged (parsing thousands of conditions costs more than a page).
        func parse(_ template: ConfigTemplate) -> ParsedTemplate {
            liveParsed.map { ParsedTemplate(template, reusing: $0) } ?? ParsedTemplate(template)
        }
    }

    /// The live version of an environment: from this node's serving cache when it holds the
    /// current version (decoded and parsed once, when it was published), otherwise read from the
    /// database.
    func liveVersion(
        _ key: EnvironmentKey
    ) async throws -> (template: ConfigTemplate, number: Int64, parsed: ParsedTemplate?) {
        let number = try await store.currentVersionNumber(projectId: key.projectId, environmentId: key.environmentId)
        if let served = publisher.cache.template(for: key), served.versionNumber == number {
            return (served.compiled.template, number, served.parsed)
        }
        let latest = try await store.latestVersion(projectId: key.projectId, environmentId: key.environmentId)
        return (latest?.template ?? ConfigTemplate(), latest?.number ?? 0, nil)
    }

    /// The person's draft of an environment, or the live template to start one from.
    func workingCopy(_ key: EnvironmentKey, user: UserAccount) async throws -> WorkingCopy {
        let (live, liveVersion, parsed) = try await self.liveVersion(key)
        if let draft = try await drafts.draft(key, userId: user.id) {
            return WorkingCopy(
                template: draft.template,
                baseVersion: draft.baseVersion,
                live: live,
                liveVersion: liveVersion,
                draft: draft,
                liveParsed: parsed
            )
        }
        return WorkingCopy(
            template: live,
            baseVersion: liveVersion,
            live: live,
            liveVersion: liveVersion,
            draft: nil,
            liveParsed: parsed
        )
    }

    /// Saves an edited template as the person's draft, on top of the version `copy` started
    /// from. A draft that no longer differs from that version is thrown away.
    /// - Parameter base: The template of the base version, to count changes against; the live
    ///   template of `copy` when it is the base.
    func saveDraft(
        _ key: EnvironmentKey,
        user: UserAccount,
        template: ConfigTemplate,
        copy: WorkingCopy,
        base: ConfigTemplate? = nil
    ) async throws {
        let reference: ConfigTemplate
        if let base {
            reference = base
        } else if copy.baseVersion == copy.liveVersion {
            reference = copy.live
        } else {
            reference = try await self.template(key, number: copy.baseVersion)
        }
        let diff = TemplateDiff(from: reference, to: template)
        if diff.isEmpty {
            try await drafts.discard(key, userId: user.id)
            return
        }
        let now = Clock.nowMilliseconds()
        var draft = Draft(
            environment: key,
            userId: user.id,
            baseVersion: copy.baseVersion,
            template: template,
            changeCount: diff.changeCount,
            createTime: copy.draft?.createTime ?? now,
            updateTime: now
        )
        draft.revision = try await drafts.save(draft)
        // Counted against the live version: the diff every page of the draft starts from.
        if base == nil, copy.baseVersion == copy.liveVersion {
            analyses.keep(
                DraftAnalysisCache.Analysis(
                    revision: draft.revision,
                    baseVersion: draft.baseVersion,
                    liveVersion: copy.liveVersion,
                    diff: diff
                ),
                for: draft
            )
        }
    }

    /// The environment bar's line about drafts: the person's own and everyone else's.
    func draftStatus(_ key: EnvironmentKey, user: UserAccount) async throws -> ConsoleChrome.DraftStatus {
        let all = try await drafts.drafts(key)
        let own = all.first { $0.userId == user.id }
        let others = all.filter { $0.userId != user.id }.map { summary in
            let name = summary.userName.isEmpty ? summary.email : summary.userName
            return
                "\(name) (\(summary.changeCount) change\(summary.changeCount == 1 ? "" : "s"), saved \(Self.displayTime(summary.updateTime)))"
        }
        return ConsoleChrome.DraftStatus(
            changes: own?.changeCount ?? 0,
            hasDraft: own != nil,
            reviewHref: ConsolePaths.environment(key) + "/review",
            others: others.isEmpty ? nil : others.joined(separator: ", ")
        )
    }
}

extension TemplateDiff {
    /// Parameters and conditions added, removed or changed.
    var changeCount: Int {
        addedParameters.count + removedParameters.count + changedParameters.count + addedConditions.count
            + removedConditions.count + changedConditions.count
    }
}
