import Foundation
import Hummingbird
import VaneAuthoring
import VaneCore
import VaneServerCore

/// Reviewing and publishing a draft: the structured diff against what is live, every validation
/// problem, and — when someone published since the draft was started — their change, with the
/// draft re-applied on top of it or the conflicts shown field by field.
struct ReviewController: DraftPages {
    let store: ConfigStore
    let drafts: DraftStore
    let publisher: TemplatePublisher
    let analyses: DraftAnalysisCache
    let renderer: ConsolePageRenderer

    /// Registers the routes, each in the group of the role it needs.
    func register(on routes: ConsoleRouteGroups) {
        routes.environment.get("review", use: review)
        routes.environmentEditor.post("review/publish", use: publishDraft)
        routes.environmentEditor.post("review/discard", use: discardDraft)
        routes.environmentEditor.post("review/resolve", use: resolveConflicts)
    }

    struct ReviewPage: Sendable {
        struct OtherDraft: Sendable {
            var name: String
            var changes: Int
            var saved: String
        }

        struct TheirChange: Sendable {
            var fromVersion: Int64
            var toVersion: Int64
            var author: String
            var message: String
            var time: String
            var diff: DiffView
        }

        struct Problem: Sendable {
            var severity: String
            var path: String
            var message: String
            var href: String?
        }

        /// How many sampled users get a different value for one key.
        typealias SampleRow = ReviewSample.Row

        var hasDraft: Bool
        var others: [OtherDraft]
        var baseVersion: Int64
        var liveVersion: Int64
        var theirChange: TheirChange?
        var merged: Bool
        var conflicts: [ConflictResolution.Subject]
        var hasConflicts: Bool
        var diff: DiffView
        var problems: [Problem]
        var hasProblems: Bool
        var errorCount: Int
        var warningCount: Int
        var canPublish: Bool
        var mayPublish: Bool
        var blockedReason: String?
        var publishAction: String
        var discardAction: String
        var resolveAction: String
        var csrf: String
        var flagsHref: String
        var sampleRows: [SampleRow]
        var hasSample: Bool
        var sampleNote: String?
    }

    /// Where a draft stands against what is live now.
    struct Rebase: Sendable {
        /// The template publishing would make live; nil while conflicts remain.
        var result: ConfigTemplate?
        /// Whether someone published since the draft was started, so it was merged.
        var moved: Bool
        /// The fields both changed differently that no choice settled.
        var conflicts: [TemplateMerge.Conflict]
        /// The version the draft started from.
        var base: ConfigTemplate
    }

    /// The draft against the live version: itself when nobody published since it was started,
    /// else merged onto it field by field by ``TemplateRebasing`` (the API's rule), with `choices`.
    func rebase(
        _ copy: WorkingCopy,
        key: EnvironmentKey,
        choices: [TemplateMerge.FieldKey: TemplateRebasing.Choice] = [:]
    ) async throws -> Rebase {
        guard copy.baseVersion != copy.liveVersion else {
            return Rebase(result: copy.template, moved: false, conflicts: [], base: copy.live)
        }
        let base = try await template(key, number: copy.baseVersion)
        do {
            switch try TemplateRebasing.rebase(copy.template, base: base, live: copy.live, choices: choices) {
            case .merged(let merged, _): return Rebase(result: merged, moved: true, conflicts: [], base: base)
            case .conflicts(let conflicts): return Rebase(result: nil, moved: true, conflicts: conflicts, base: base)
            }
        } catch {
            throw ConsolePageError.badRequest("\(error.description); open the review page again")
        }
    }

    /// ``ValueChangeSample/estimate(from:to:diff:savedContexts:at:)`` (the API's rule) in words.
    func sampleChanges(
        live: ConfigTemplate,
        draft: ConfigTemplate,
        diff: TemplateDiff,
        savedContexts saved: [SavedContext],
        at now: Date,
        flagsBase: String
    ) -> ReviewSample {
        switch ValueChangeSample.estimate(from: live, to: draft, diff: diff, savedContexts: saved, at: now) {
        case .noValueChanges:
            return ReviewSample(
                rows: [],
                note: "No user's value changes: the draft changes only descriptions, titles or unused conditions."
            )
        case .doesNotCompile:
            return ReviewSample(rows: [], note: "Fix the errors below to see how many users' values change.")
        case .counts(let counts, let savedCount):
            let rows = counts.map { count in
                let share = count.of == 0 ? 0 : Double(count.changed) * 100 / Double(count.of)
                return ReviewPage.SampleRow(
                    key: count.key,
                    href: draft.parameter(forKey: count.key) == nil
                        ? nil : "\(flagsBase)/\(ConsolePaths.encode(count.key))/edit",
                    changed: "\(count.changed) of \(count.of) (\(Self.percentText(share)))",
                    noneChange: count.changed == 0
                )
            }
            let synthetic = ValueChangeSample.syntheticCount
            let note =
                "Sampled: \(savedCount) saved context\(savedCount == 1 ? "" : "s") and \(synthetic) synthetic users made from the values the conditions test, with random ids for percent splits. A key added or removed changes for everyone."
            return ReviewSample(rows: rows, note: note)
        }
    }

    /// `21.2 %`, `0 %`, `< 0.1 %`.
    static func percentText(_ share: Double) -> String {
        if share == 0 { return "0 %" }
        if share < 0.1 { return "< 0.1 %" }
        let tenths = (share * 10).rounded() / 10
        return tenths == tenths.rounded() ? "\(Int(tenths)) %" : "\(tenths) %"
    }

    @Sendable func review(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let copy = try await workingCopy(key, user: user)
        let base = ConsolePaths.environment(key)
        let others = try await drafts.drafts(key).filter { $0.userId != user.id }.map {
            ReviewPage.OtherDraft(
                name: $0.userName.isEmpty ? $0.email : "\($0.userName) (\($0.email))",
                changes: $0.changeCount,
                saved: Self.displayTime($0.updateTime)
            )
        }
        let rebase = try await self.rebase(copy, key: key)
        var theirChange: ReviewPage.TheirChange?
        if copy.draft != nil, copy.baseVersion != copy.liveVersion {
            let live = try await store.version(
                projectId: key.projectId,
                environmentId: key.environmentId,
                number: copy.liveVersion
            )
            theirChange = ReviewPage.TheirChange(
                fromVersion: copy.baseVersion,
                toVersion: copy.liveVersion,
                author: live?.template.version?.updateUser?.name ?? "someone",
                message: live?.template.version?.description ?? "",
                time: live.map { Self.displayTime($0.updateTime) } ?? "",
                diff: DiffView(from: rebase.base, to: copy.live)
            )
        }
        let conflicts = ConflictResolution(rebase.conflicts).subjects
        let result = rebase.result ?? copy.template
        // The stored draft itself, when nobody published in between: what it changes is worked
        // out once per draft and live version (``DraftAnalysisCache``), not on every reload.
        let stored = rebase.moved ? nil : copy.draft
        let known = stored.flatMap { analyses.analysis(of: $0, liveVersion: copy.liveVersion) }
        let issues: [ValidationIssue]
        if copy.draft == nil {
            issues = []
        } else if let knownIssues = known?.issues {
            issues = knownIssues
        } else {
            let parsed = copy.parse(result)
            issues = parsed.validate().sorted { $0.severity < $1.severity }
        }
        let problems = issues.map { issue in
            ReviewPage.Problem(
                severity: issue.severity.rawValue,
                path: issue.path.description,
                message: issue.message,
                href: Self.parameterKey(in: issue.path).map { "\(base)/flags/\(ConsolePaths.encode($0))/edit" }
            )
        }
        let errorCount = issues.filter { $0.severity == .error }.count
        let templateDiff = known?.diff ?? TemplateDiff(from: copy.live, to: result)
        let diff = DiffView(from: copy.live, to: result, diff: templateDiff)
        let mayPublish = principal.permits(.publish(key))
        var blocked: String?
        if !conflicts.isEmpty {
            blocked = "Settle the conflicts above first."
        } else if errorCount > 0 {
            blocked = "Fix the \(errorCount) error\(errorCount == 1 ? "" : "s") above first; warnings do not block."
        } else if diff.empty {
            blocked = "The draft makes no change to the live version."
        }
        var sample = ReviewSample(rows: [], note: nil)
        var keptSample: DraftAnalysisCache.Sample?
        if copy.draft != nil, conflicts.isEmpty, !diff.empty {
            let saved = try await drafts.savedContexts(projectId: key.projectId)
            let now = Date()
            if let previous = known?.sample, previous.savedContexts == saved,
                now.timeIntervalSince(previous.time) < DraftAnalysisCache.sampleLifetime
            {
                sample = previous.value
                keptSample = previous
            } else {
                sample = sampleChanges(
                    live: copy.live,
                    draft: result,
                    diff: templateDiff,
                    savedContexts: saved,
                    at: now,
                    flagsBase: "\(base)/flags"
                )
                keptSample = DraftAnalysisCache.Sample(savedContexts: saved, time: now, value: sample)
            }
        }
        if let stored {
            analyses.keep(
                DraftAnalysisCache.Analysis(
                    revision: stored.revision,
                    baseVersion: stored.baseVersion,
                    liveVersion: copy.liveVersion,
                    diff: templateDiff,
                    issues: issues,
                    sample: keptSample
                ),
                for: stored
            )
        }
        let page = ReviewPage(
            hasDraft: copy.draft != nil,
            others: others,
            baseVersion: copy.baseVersion,
            liveVersion: copy.liveVersion,
            theirChange: theirChange,
            merged: rebase.moved && conflicts.isEmpty,
            conflicts: conflicts,
            hasConflicts: !conflicts.isEmpty,
            diff: diff,
            problems: problems,
            hasProblems: !problems.isEmpty,
            errorCount: errorCount,
            warningCount: issues.count - errorCount,
            canPublish: mayPublish && blocked == nil,
            mayPublish: mayPublish,
            blockedReason: blocked,
            publishAction: "\(base)/review/publish",
            discardAction: "\(base)/review/discard",
            resolveAction: "\(base)/review/resolve",
            csrf: session.csrfToken,
            flagsHref: "\(base)/flags",
            sampleRows: sample.rows,
            hasSample: !sample.rows.isEmpty,
            sampleNote: sample.note
        )
        var chrome = try await environmentChrome(
            title: "Review",
            user: user,
            project: project,
            environment: environment,
            tab: "review"
        )
        if request.uri.queryParameters.get("moved") != nil {
            chrome.flash = .error(
                "Someone published while you were reviewing, so nothing was published. Their change is shown below; review again."
            )
        } else if request.uri.queryParameters.get("resolved") != nil {
            chrome.flash = .ok(
                "Conflicts settled; your draft now starts from version \(copy.liveVersion). Review it again."
            )
        }
        return renderer.render(.review, chrome: chrome, page: page, context: context)
    }

    @Sendable func publishDraft(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, principal) = try context.signedIn()
        let form = try await ConsoleForm.read(request, context: context)
        let (key, _, _) = try await self.environment(context)
        let message = try form.required("message", label: "A message saying why")
        guard let reviewed = form.text("live").flatMap(Int64.init) else {
            throw ConsolePageError.badRequest("the form does not say which live version was reviewed")
        }
        let reviewPath = ConsolePaths.environment(key) + "/review"
        let copy = try await workingCopy(key, user: user)
        guard copy.draft != nil else { throw ConsoleRedirect(location: reviewPath) }
        // Publish only what was reviewed: if the live version moved, review again.
        guard copy.liveVersion == reviewed else { throw ConsoleRedirect(location: reviewPath + "?moved=1") }
        guard var template = try await rebase(copy, key: key).result else {
            throw ConsoleRedirect(location: reviewPath)
        }
        template.version = TemplateVersion(description: message)
        let published: ServedTemplate
        do {
            published = try await publisher.publish(
                try publisher.check(template),
                to: key,
                expectedVersion: reviewed,
                actor: principal.actor
            )
        } catch let error as PublishError {
            if case .storage(.versionConflict) = error { throw ConsoleRedirect(location: reviewPath + "?moved=1") }
            throw ConsolePageError.badRequest(ConsolePublishing.message(error))
        }
        try await drafts.discard(key, userId: user.id)
        throw ConsoleRedirect(location: ConsolePaths.environment(key) + "/flags?published=\(published.versionNumber)")
    }

    @Sendable func discardDraft(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, _) = try context.signedIn()
        _ = try await ConsoleForm.read(request, context: context)
        let (key, _, _) = try await self.environment(context)
        try await drafts.discard(key, userId: user.id)
        throw ConsoleRedirect(location: ConsolePaths.environment(key) + "/flags")
    }

    @Sendable func resolveConflicts(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, _) = try context.signedIn()
        let form = try await ConsoleForm.read(request, context: context)
        let (key, _, _) = try await self.environment(context)
        let reviewPath = ConsolePaths.environment(key) + "/review"
        let copy = try await workingCopy(key, user: user)
        guard copy.draft != nil, let reviewed = form.text("live").flatMap(Int64.init) else {
            throw ConsoleRedirect(location: reviewPath)
        }
        guard copy.liveVersion == reviewed else { throw ConsoleRedirect(location: reviewPath + "?moved=1") }
        let conflicts = try await rebase(copy, key: key).conflicts
        guard !conflicts.isEmpty else { throw ConsoleRedirect(location: reviewPath) }
        let choices = try ConflictResolution.choices(for: conflicts, in: form)
        guard let merged = try await rebase(copy, key: key, choices: choices).result else {
            throw ConsolePageError.badRequest("the conflicts could not all be settled; open the review page again")
        }
        var rebased = copy
        rebased.baseVersion = copy.liveVersion
        try await saveDraft(key, user: user, template: merged, copy: rebased, base: copy.live)
        throw ConsoleRedirect(location: reviewPath + "?resolved=1")
    }

    /// The parameter a validation path is about, if any.
    static func parameterKey(in path: JSONPath) -> String? { ParameterIssues.parameterLocation(of: path)?.key }
}
