import Foundation
import Hummingbird
import VaneAuthoring
import VaneCore
import VaneServerCore

/// Reviewing and publishing a draft: the structured diff against what is live, every validation
/// problem, and — when someone published since the draft was started — their change, with the
/// draft re-applied on top of it or the conflicts shown field by field. Where the environment's
/// change policy is in force, the draft is not published but sent for review as a change request.
struct ReviewController: DraftPages {
    let store: ConfigStore
    let drafts: DraftStore
    let publisher: TemplatePublisher
    let requests: ChangeRequestStore
    let analyses: DraftAnalysisCache
    let renderer: ConsolePageRenderer

    /// Registers the routes, each in the group of the role it needs.
    func register(on routes: ConsoleRouteGroups) {
        routes.environment.get("review", use: review)
        routes.environmentEditor.post("review/publish", use: publishDraft)
        routes.environmentEditor.post("review/request", use: requestReview)
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
        /// The policy: in force, the draft goes to review as a change request instead.
        var policy: ChangePolicyView
        var requestAction: String
        var discardAction: String
        var resolveAction: String
        var csrf: String
        var flagsHref: String
        var sampleRows: [SampleRow]
        var hasSample: Bool
        var sampleNote: String?
        /// Values an earlier condition shadows, each with the move that fixes it.
        var shadows: [ShadowNotice]
        var hasShadows: Bool
        var canMove: Bool
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
        let policy = try await requests.policy(key).policy
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
                sample = ReviewSample.estimate(
                    live: copy.live,
                    proposed: result,
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
        // Only worked out when validation found one: most drafts have none.
        let findings =
            issues.contains { $0.rule == "shadowed-value" } ? copy.parse(result).shadowedValues() : []
        let shadows = ShadowNotice.notices(findings, key: key, returnTo: "review")
        var sampleRows = sample.rows
        for index in sampleRows.indices where sampleRows[index].noneChange {
            if let finding = findings.first(where: { $0.parameterKey == sampleRows[index].key }) {
                sampleRows[index].reason =
                    "\(finding.shadowedBy) decides before \(finding.condition) for every user \(finding.condition) matches"
            }
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
            policy: ChangePolicyView(policy),
            requestAction: "\(base)/review/request",
            discardAction: "\(base)/review/discard",
            resolveAction: "\(base)/review/resolve",
            csrf: session.csrfToken,
            flagsHref: "\(base)/flags",
            sampleRows: sampleRows,
            hasSample: !sampleRows.isEmpty,
            sampleNote: sample.note,
            shadows: shadows,
            hasShadows: !shadows.isEmpty,
            canMove: mayPublish
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
        } else if let name = request.uri.queryParameters.get("ordered") {
            chrome.flash = .ok(
                "Moved \(name) up in your draft's condition order. The review below is of the new order."
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

    /// Opens a change request from the draft, as reviewed, and takes the person to its review.
    /// The request now holds the change, so the draft is discarded as a publish discards it.
    @Sendable func requestReview(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, principal) = try context.signedIn()
        let form = try await ConsoleForm.read(request, context: context)
        let (key, _, _) = try await self.environment(context)
        let title = try form.required("title", label: "A title saying what the change does")
        guard title.count <= ChangeRequestsController.maximumTitleLength else {
            throw ConsolePageError.badRequest(
                "the title has at most \(ChangeRequestsController.maximumTitleLength) characters; put the rest in the description"
            )
        }
        guard let reviewed = form.text("live").flatMap(Int64.init) else {
            throw ConsolePageError.badRequest("the form does not say which live version was reviewed")
        }
        let reviewPath = ConsolePaths.environment(key) + "/review"
        let copy = try await workingCopy(key, user: user)
        guard copy.draft != nil else { throw ConsoleRedirect(location: reviewPath) }
        // Ask for review of exactly what was reviewed here: if the live version moved, look again.
        guard copy.liveVersion == reviewed else { throw ConsoleRedirect(location: reviewPath + "?moved=1") }
        guard let template = try await rebase(copy, key: key).result else {
            throw ConsoleRedirect(location: reviewPath)
        }
        do {
            _ = try publisher.check(template)
        } catch {
            throw ConsolePageError.badRequest(ConsolePublishing.message(error))
        }
        let opened = try await requests.create(
            .template(template),
            in: key,
            title: title,
            description: form.text("description") ?? "",
            draft: false,
            author: principal.changeActor
        )
        try await drafts.discard(key, userId: user.id)
        throw ConsoleRedirect(
            location: ConsolePaths.environment(key) + "/change-requests/\(ConsolePaths.encode(opened.id))?opened=1"
        )
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
