import Foundation
import HTTPTypes
import Hummingbird
import VaneAuthoring
import VaneCore
import VaneServerCore

/// One change request's review: what applying it now would change (the diff and the sample of
/// users whose values change, as the API's preview computes them), its reviews, and the
/// actions the person may take.
extension ChangeRequestsController {
    struct DetailPage: Sendable {
        struct Review: Sendable {
            var reviewer: String
            var decision: String
            var decisionLabel: String
            var comment: String
            var time: String
            var revision: Int64
            /// Of an earlier revision: it no longer counts.
            var outdated: Bool
        }

        var id: String
        var title: String
        var description: String
        var author: String
        var state: String
        var stateLabel: String
        var stateReason: String?
        var breakGlass: String?
        var baseVersion: Int64
        var revision: Int64
        var created: String
        var updated: String
        /// Scheduled: when it applies.
        var applies: String?
        var change: String
        var changeDetails: [String]
        var approvals: String
        var policy: ChangePolicyView
        /// Applied: the version it published, with the diff's link.
        var appliedVersion: Int64?
        var appliedHref: String?
        /// Not final: where applying it now stands against the live version.
        var liveVersion: Int64
        var appliesNote: String?
        var stale: String?
        var diff: DiffView?
        var sampleRows: [ReviewSample.Row]
        var hasSample: Bool
        var sampleNote: String?
        var reviews: [Review]
        var hasReviews: Bool
        var csrf: String
        var contentHash: String
        var reviewAction: String
        var cancelAction: String
        var applyAction: String
        var listHref: String
        /// An editor of the environment: may comment.
        var mayComment: Bool
        /// May approve or reject now.
        var mayDecide: Bool
        /// Why the person may not approve or reject (their own request, not an approver).
        var decideNote: String?
        /// An editor, on a request that has not applied or been cancelled: the apply card.
        var showsActions: Bool
        var mayCancel: Bool
        var mayApply: Bool
        /// Why an open request cannot apply yet.
        var applyNote: String?
    }

    @Sendable func detail(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let query = ConsoleForm.query(request)
        var flash: ConsoleChrome.Flash?
        if query["opened"] != nil {
            flash = .ok("Change request opened. It goes live when it is approved and applied.")
        } else if let decision = query["reviewed"] {
            flash = .ok(
                decision == "comment"
                    ? "Comment added." : "Your \(decision == "reject" ? "rejection" : "approval") is recorded."
            )
        } else if query["cancelled"] != nil {
            flash = .ok("Change request cancelled.")
        }
        return try await renderDetail(context, flash: flash)
    }

    /// The review page; after a refused action, with its message and status.
    func renderDetail(
        _ context: VaneRequestContext,
        flash: ConsoleChrome.Flash?,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let (user, session, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let changeRequest = try await requests.request(key, id: try requestId(context))
        let policy = try await requests.policy(key).policy
        let actor = principal.changeActor
        let base = ConsolePaths.environment(key)
        let path = "\(base)/change-requests/\(ConsolePaths.encode(changeRequest.id))"
        let isEditor = principal.permits(.publish(key))
        let decideProblem = ChangeApproval.mayReview(actor, authorId: changeRequest.authorId, under: policy)
        let decisionsOpen = Self.acceptsDecisions(changeRequest)
        let (change, details) = Self.describe(changeRequest.change)

        let live = try await applying.publisher.liveTemplate(key)
        var appliesNote: String?
        var stale: String?
        var diff: DiffView?
        var sample = ReviewSample(rows: [], note: nil)
        if !changeRequest.state.isFinal {
            let outcome: ChangeRequestApplying.Outcome
            do {
                outcome = try await applying.outcome(changeRequest)
            } catch let error as PublishError {
                // The version it was proposed on was pruned: nothing to merge from.
                outcome = .stale(ConsolePublishing.message(error))
            }
            switch outcome {
            case .noTemplate:
                appliesNote = "This change publishes no template version; it applies as described above."
            case .stale(let reason):
                stale = reason
            case .publishes(let template, let onto):
                appliesNote =
                    onto == changeRequest.baseVersion
                    ? "It applies on version \(onto), the one it was proposed on."
                    : "Version \(onto) went live since it was proposed on version \(changeRequest.baseVersion); the change merges cleanly onto it, and this is what applying it now publishes."
                let templateDiff = TemplateDiff(from: live.template, to: template)
                let view = DiffView(from: live.template, to: template, diff: templateDiff)
                diff = view
                if !view.empty {
                    sample = ReviewSample.estimate(
                        live: live.template,
                        proposed: template,
                        diff: templateDiff,
                        savedContexts: try await drafts.savedContexts(projectId: key.projectId),
                        at: Date(),
                        flagsBase: "\(base)/flags"
                    )
                }
            }
        }
        let reviews = changeRequest.reviews.reversed().map { review in
            DetailPage.Review(
                reviewer: review.reviewerName,
                decision: review.decision.rawValue,
                decisionLabel: Self.decisionLabel(review.decision),
                comment: review.comment,
                time: Self.displayTime(review.time),
                revision: review.revision,
                outdated: review.decision != .comment
                    && (review.revision != changeRequest.revision || review.contentHash != changeRequest.contentHash)
            )
        }
        let appliedHref = changeRequest.appliedVersion.flatMap { version in
            changeRequest.change.publishesVersion && version > 1
                ? "\(base)/diff?from=\(version - 1)&to=\(version)" : nil
        }
        let page = DetailPage(
            id: changeRequest.id,
            title: changeRequest.title,
            description: changeRequest.description,
            author: changeRequest.authorName,
            state: changeRequest.state.rawValue,
            stateLabel: Self.stateLabel(changeRequest.state),
            stateReason: changeRequest.stateReason,
            breakGlass: changeRequest.breakGlass,
            baseVersion: changeRequest.baseVersion,
            revision: changeRequest.revision,
            created: Self.displayTime(changeRequest.createTime),
            updated: Self.displayTime(changeRequest.updateTime),
            applies: changeRequest.state == .scheduled ? changeRequest.applyTime.map(Self.displayTime) : nil,
            change: change,
            changeDetails: details,
            approvals:
                "\(ChangeApproval.approvals(of: changeRequest, under: policy).count) of \(ChangeApproval.required(policy))",
            policy: ChangePolicyView(policy),
            appliedVersion: changeRequest.state == .applied ? changeRequest.appliedVersion : nil,
            appliedHref: appliedHref,
            liveVersion: live.version,
            appliesNote: appliesNote,
            stale: stale,
            diff: diff,
            sampleRows: sample.rows,
            hasSample: !sample.rows.isEmpty,
            sampleNote: sample.note,
            reviews: reviews,
            hasReviews: !reviews.isEmpty,
            csrf: session.csrfToken,
            contentHash: changeRequest.contentHash,
            reviewAction: "\(path)/review",
            cancelAction: "\(path)/cancel",
            applyAction: "\(path)/apply",
            listHref: "\(base)/change-requests",
            mayComment: isEditor,
            mayDecide: isEditor && decisionsOpen && decideProblem == nil,
            decideNote: isEditor && decisionsOpen ? decideProblem.map(Self.sentence) : nil,
            showsActions: isEditor && !changeRequest.state.isFinal,
            mayCancel: isEditor && changeRequest.authorId == actor.id && !changeRequest.state.isFinal,
            mayApply: isEditor && changeRequest.state == .approved,
            applyNote: changeRequest.state == .inReview || changeRequest.state == .rejected
                ? ChangeApproval.blocker(changeRequest, under: policy).map { "It cannot apply yet: \($0)." } : nil
        )
        var chrome = try await environmentChrome(
            title: changeRequest.title,
            user: user,
            project: project,
            environment: environment,
            tab: "change-requests"
        )
        chrome.flash = flash
        return renderer.render(.changeRequest, chrome: chrome, page: page, context: context, status: status)
    }

    /// Approve, reject or comment, bound to the revision the reviewer saw (its content hash).
    @Sendable func review(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (_, _, principal) = try context.signedIn()
        let form = try await ConsoleForm.read(request, context: context)
        let (key, _, _) = try await self.environment(context)
        let id = try requestId(context)
        guard let decision = form.text("decision").flatMap(ChangeReview.Decision.init(rawValue:)) else {
            throw ConsolePageError.badRequest("choose approve, reject or comment")
        }
        let comment = form.text("comment") ?? ""
        if decision == .comment && comment.isEmpty {
            throw ConsolePageError.badRequest("a comment needs some text; write it in the comment field")
        }
        guard comment.count <= Self.maximumCommentLength else {
            throw ConsolePageError.badRequest("a comment has at most \(Self.maximumCommentLength) characters")
        }
        do {
            _ = try await requests.review(
                key,
                id: id,
                decision: decision,
                comment: comment,
                seenHash: form.text("contentHash"),
                by: principal.changeActor
            )
        } catch let refusal as ChangeRefusal {
            return try await refused(refusal, context: context)
        }
        throw ConsoleRedirect(location: detailPath(key, id: id) + "?reviewed=\(decision.rawValue)")
    }

    @Sendable func cancel(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (_, _, principal) = try context.signedIn()
        _ = try await ConsoleForm.read(request, context: context)
        let (key, _, _) = try await self.environment(context)
        let id = try requestId(context)
        do {
            _ = try await requests.cancel(key, id: id, by: principal.actor)
        } catch let refusal as ChangeRefusal {
            return try await refused(refusal, context: context)
        }
        throw ConsoleRedirect(location: detailPath(key, id: id) + "?cancelled=1")
    }

    /// Applies an approved request through ``ChangeRequestApplying``; a request whose live
    /// version moved and that does not rebase is suspended there, and the page says why.
    @Sendable func apply(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (_, _, principal) = try context.signedIn()
        _ = try await ConsoleForm.read(request, context: context)
        let (key, _, _) = try await self.environment(context)
        let id = try requestId(context)
        let applied: ChangeRequest
        do {
            applied = try await applying.apply(key, id: id, by: principal.changeActor, breakGlass: nil)
        } catch let refusal as ChangeRefusal {
            return try await refused(refusal, context: context)
        } catch let error as PublishError {
            if case .changeRefused(let refusal) = error { return try await refused(refusal, context: context) }
            return try await renderDetail(
                context,
                flash: .error("Nothing was applied: \(ConsolePublishing.message(error))."),
                status: .conflict
            )
        } catch let refusal as ExperimentStartRefusal {
            return try await renderDetail(
                context,
                flash: .error("Nothing was applied: \(refusal.description)."),
                status: .conflict
            )
        } catch let error as StorageError where error != .busy {
            return try await renderDetail(
                context,
                flash: .error("Nothing was applied: \(error.description)."),
                status: .conflict
            )
        }
        let result = applied.appliedVersion.map { "Applied: version \($0) is live." } ?? "Applied."
        return try await renderDetail(context, flash: .ok(result))
    }

    /// The review page again, saying what was refused and what to do (409; 403 when the person
    /// may not; 404 for a request that is not there).
    func refused(_ refusal: ChangeRefusal, context: VaneRequestContext) async throws -> Response {
        switch refusal {
        case .notFound: throw refusal
        case .notAllowed:
            return try await renderDetail(
                context,
                flash: .error(Self.sentence(refusal.description)),
                status: .forbidden
            )
        default:
            return try await renderDetail(context, flash: .error(Self.sentence(refusal.description)), status: .conflict)
        }
    }

    func requestId(_ context: VaneRequestContext) throws(ConsolePageError) -> String {
        guard let id = context.parameters.get("request"), !id.isEmpty, id.count <= 64 else {
            throw ConsolePageError.notFound("the address names no change request")
        }
        return id
    }

    func detailPath(_ key: EnvironmentKey, id: String) -> String {
        ConsolePaths.environment(key) + "/change-requests/" + ConsolePaths.encode(id)
    }

    /// Whether approvals and rejections are taken: as ``ChangeRequestStore/review(_:id:decision:comment:seenHash:by:)``
    /// takes them (in review, approved, rejected, or applied by break-glass for the post-hoc review).
    static func acceptsDecisions(_ request: ChangeRequest) -> Bool {
        switch request.state {
        case .inReview, .approved, .rejected: true
        case .applied: request.breakGlass != nil
        case .draft, .scheduled, .cancelled, .suspended: false
        }
    }

    /// What a change does, in words, with details (a policy's terms).
    static func describe(_ change: ProposedChange) -> (String, [String]) {
        switch change {
        case .template: return ("Publish a new template version", [])
        case .rollback(let number): return ("Roll back to version \(number)", [])
        case .experimentStart(let key): return ("Start the experiment \(key)", [])
        case .experimentStop(let key): return ("Stop the experiment \(key)", [])
        case .rolloutStart(let id): return ("Start the rollout \(id) (its steps then advance by themselves)", [])
        case .policy(let policy):
            let view = ChangePolicyView(policy)
            return ("Change the change policy: \(view.summary)", view.details)
        }
    }

    static func decisionLabel(_ decision: ChangeReview.Decision) -> String {
        switch decision {
        case .approve: "Approved"
        case .reject: "Rejected"
        case .comment: "Commented"
        }
    }

    /// A store message as a sentence: capitalised, with a full stop.
    static func sentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        let capitalised = first.uppercased() + text.dropFirst()
        return capitalised.hasSuffix(".") ? capitalised : capitalised + "."
    }
}
