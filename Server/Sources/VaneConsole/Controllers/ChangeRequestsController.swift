import Foundation
import Hummingbird
import VaneAuthoring
import VaneCore
import VaneServerCore

/// An environment's change requests (docs/GOVERNANCE.md): the list — open, mine to review,
/// scheduled, history — and each request's review, where people approve, reject, comment,
/// cancel and apply. Every action goes through ``ChangeRequestStore`` and
/// ``ChangeRequestApplying``, as the API's does; the policy is checked there, and again in the
/// transaction that applies a request.
struct ChangeRequestsController: EnvironmentPages {
    let store: ConfigStore
    let drafts: DraftStore
    let applying: ChangeRequestApplying
    let renderer: ConsolePageRenderer

    var requests: ChangeRequestStore { applying.requests }

    /// The longest title a request may have (the API's limit too).
    static let maximumTitleLength = 200
    /// The longest comment a review may carry (the API's limit too).
    static let maximumCommentLength = 10_000

    /// Registers the routes, each in the group of the role it needs.
    func register(on routes: ConsoleRouteGroups) {
        routes.environment.get("change-requests", use: list)
        routes.environment.get("change-requests/:request", use: detail)
        routes.environmentEditor.post("change-requests/:request/review", use: review)
        routes.environmentEditor.post("change-requests/:request/cancel", use: cancel)
        routes.environmentEditor.post("change-requests/:request/apply", use: apply)
    }

    /// The list's tabs.
    enum View: String, CaseIterable, Sendable {
        case open, mine, scheduled, history

        var label: String {
            switch self {
            case .open: "Open"
            case .mine: "Mine to review"
            case .scheduled: "Scheduled"
            case .history: "History"
            }
        }

        /// The states the tab lists (the database filters on them).
        var states: Set<ChangeRequestState> {
            switch self {
            case .open: Set(ChangeRequestState.allCases.filter { !$0.isFinal && $0 != .scheduled })
            case .mine: [.inReview]
            case .scheduled: [.scheduled]
            case .history: Set(ChangeRequestState.allCases.filter(\.isFinal))
            }
        }

        /// Whether a request belongs in the tab; `mayReview` says whether the person may decide it.
        func contains(_ request: ChangeRequest, mayReview: Bool) -> Bool {
            switch self {
            case .open: !request.state.isFinal && request.state != .scheduled
            case .mine: request.state == .inReview && mayReview
            case .scheduled: request.state == .scheduled
            case .history: request.state.isFinal
            }
        }
    }

    struct ListPage: Sendable {
        struct Tab: Sendable {
            var href: String
            var label: String
            var current: Bool
        }

        struct Row: Sendable {
            var title: String
            var href: String
            var author: String
            var state: String
            var stateLabel: String
            var approvals: String
            var baseVersion: Int64
            var updated: String
            var updatedISO: String
            /// Scheduled: when it applies.
            var applies: String?
        }

        var tabs: [Tab]
        var viewLabel: String
        var rows: [Row]
        var hasRows: Bool
        var empty: String
        var policy: ChangePolicyView
        var reviewHref: String
    }

    @Sendable func list(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let base = ConsolePaths.environment(key) + "/change-requests"
        let query = ConsoleForm.query(request)
        guard let view = View(rawValue: query["view"] ?? View.open.rawValue) else {
            throw ConsolePageError.badRequest(
                "view must be one of \(View.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        let policy = try await requests.policy(key).policy
        let actor = principal.changeActor
        let mayPublish = principal.permits(.publish(key))
        let rows = try await requests.requests(key, states: view.states).filter { request in
            view.contains(request, mayReview: mayPublish && Self.awaitsDecision(request, from: actor, under: policy))
        }.map { request in
            ListPage.Row(
                title: request.title,
                href: "\(base)/\(ConsolePaths.encode(request.id))",
                author: request.authorName,
                state: request.state.rawValue,
                stateLabel: Self.stateLabel(request.state),
                approvals:
                    "\(ChangeApproval.approvals(of: request, under: policy).count)/\(ChangeApproval.required(policy))",
                baseVersion: request.baseVersion,
                updated: Self.displayTime(request.updateTime),
                updatedISO: Clock.rfc3339(milliseconds: request.updateTime),
                applies: request.state == .scheduled ? request.applyTime.map(Self.displayTime) : nil
            )
        }
        let page = ListPage(
            tabs: View.allCases.map {
                ListPage.Tab(href: "\(base)?view=\($0.rawValue)", label: $0.label, current: $0 == view)
            },
            viewLabel: view.label,
            rows: rows,
            hasRows: !rows.isEmpty,
            empty: Self.emptyText(view),
            policy: ChangePolicyView(policy),
            reviewHref: ConsolePaths.environment(key) + "/review"
        )
        let chrome = try await environmentChrome(
            title: "Change requests",
            user: user,
            project: project,
            environment: environment,
            tab: "change-requests"
        )
        return renderer.render(.changeRequests, chrome: chrome, page: page, context: context)
    }

    /// Whether a request waits for this person's decision: in review, theirs to decide under
    /// the policy (``ChangeApproval/mayReview(_:authorId:under:)``), and not yet decided by
    /// them at its current revision.
    static func awaitsDecision(_ request: ChangeRequest, from actor: ChangeActor, under policy: ChangePolicy) -> Bool {
        guard ChangeApproval.mayReview(actor, authorId: request.authorId, under: policy) == nil else { return false }
        return !request.currentReviews.contains { $0.reviewerId == actor.id }
    }

    static func emptyText(_ view: View) -> String {
        switch view {
        case .open: "No open change requests."
        case .mine: "Nothing waits for your review."
        case .scheduled: "No change request is scheduled."
        case .history: "No change request has been applied or cancelled yet."
        }
    }

    static func stateLabel(_ state: ChangeRequestState) -> String {
        switch state {
        case .draft: "Draft"
        case .inReview: "In review"
        case .approved: "Approved"
        case .scheduled: "Scheduled"
        case .applied: "Applied"
        case .rejected: "Rejected"
        case .cancelled: "Cancelled"
        case .suspended: "Suspended"
        }
    }
}
