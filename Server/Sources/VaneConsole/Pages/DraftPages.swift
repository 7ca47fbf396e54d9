import VaneAuthoring
import VaneCore
import VaneServerCore

/// Drafts: what editors change collects in a draft of the environment's template kept on the
/// server, one per person per environment, until it is reviewed and published.
/// A controller whose pages work on a person's draft: it reads the live version, the person's
/// working copy, and saves drafts.
protocol DraftPages: EnvironmentPages {
    var publisher: TemplatePublisher { get }
    var analyses: DraftAnalysisCache { get }
}

extension DraftPages {

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

}

extension TemplateDiff {
    /// Parameters and conditions added, removed or changed.
    var changeCount: Int {
        addedParameters.count + removedParameters.count + changedParameters.count + addedConditions.count
            + removedConditions.count + changedConditions.count
    }
}
