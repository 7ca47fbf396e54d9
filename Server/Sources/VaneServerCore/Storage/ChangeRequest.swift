import Crypto
import VaneAuthoring
package import VaneCore

/// What a change request proposes: everything that alters what clients get. A new kind (a
/// rollout plan) is a new case with its own JSON form.
package enum ProposedChange: Sendable {
    /// Publish this template as the next version.
    case template(ConfigTemplate)
    /// Publish a copy of an earlier version.
    case rollback(to: Int64)
    /// Start a draft experiment.
    case experimentStart(String)
    /// Stop a running experiment.
    case experimentStop(String)
    /// Replace the environment's change policy.
    case policy(ChangePolicy)
    /// Start a draft rollout (its plan is stored with it and never changes): once approved, the
    /// rollout's later steps need no request (docs/ROLLOUTS.md).
    case rolloutStart(String)

    /// The kind's name in JSON and the database.
    package var kind: String {
        switch self {
        case .template: "template"
        case .rollback: "rollback"
        case .experimentStart: "experiment_start"
        case .experimentStop: "experiment_stop"
        case .policy: "policy"
        case .rolloutStart: "rollout_start"
        }
    }

    /// The kinds, for messages.
    package static let kinds = [
        "template", "rollback", "experiment_start", "experiment_stop", "policy", "rollout_start",
    ]

    /// Whether the change publishes a template version (and so rebases or goes stale with it).
    package var publishesVersion: Bool {
        switch self {
        case .template, .rollback: true
        case .experimentStart, .experimentStop, .policy, .rolloutStart: false
        }
    }

    /// The change as JSON: `{"kind": …, <the kind's member>}`.
    package func json() -> JSONObject {
        switch self {
        case .template(let template):
            var unversioned = template
            unversioned.version = nil
            return ["kind": .string(kind), "template": unversioned.json()]
        case .rollback(let number):
            return ["kind": .string(kind), "versionNumber": .string(String(number))]
        case .experimentStart(let key), .experimentStop(let key):
            return ["kind": .string(kind), "experiment": .string(key)]
        case .policy(let policy):
            return ["kind": .string(kind), "policy": .object(policy.json())]
        case .rolloutStart(let id):
            return ["kind": .string(kind), "rollout": .string(id)]
        }
    }

    /// Reads a change from its JSON form.
    /// - Throws: ``ChangeInputError`` naming the member (under `path`) and what was expected.
    package static func read(_ value: JSONValue?, path: String = "change") throws(ChangeInputError) -> ProposedChange {
        guard let object = value?.objectValue else {
            throw ChangeInputError(
                path: path,
                message: "expected an object with \"kind\": \(kinds.joined(separator: ", "))"
            )
        }
        switch object["kind"]?.stringValue {
        case "template":
            guard let json = object["template"] else {
                throw ChangeInputError(path: path + ".template", message: "a template change needs the whole template")
            }
            do {
                return .template(try ConfigTemplate(json: json))
            } catch {
                throw ChangeInputError(
                    path: path + ".template",
                    message: error.issues.prefix(5).map { "\($0.path): \($0.message)" }.joined(separator: "; ")
                )
            }
        case "rollback":
            let member = object["versionNumber"]
            guard let text = member?.stringValue ?? member?.numberValue?.text, let number = Int64(text), number >= 1
            else {
                throw ChangeInputError(
                    path: path + ".versionNumber",
                    message: "a rollback needs the version to roll back to (a number from 1)"
                )
            }
            return .rollback(to: number)
        case "experiment_start", "experiment_stop":
            guard let key = object["experiment"]?.stringValue, !key.isEmpty, key.count <= 64 else {
                throw ChangeInputError(path: path + ".experiment", message: "name the experiment by its key")
            }
            return object["kind"]?.stringValue == "experiment_start" ? .experimentStart(key) : .experimentStop(key)
        case "policy":
            guard let policy = object["policy"]?.objectValue else {
                throw ChangeInputError(path: path + ".policy", message: "a policy change needs the new policy object")
            }
            return .policy(try ChangePolicy.read(policy, path: path + ".policy"))
        case "rollout_start":
            guard let id = object["rollout"]?.stringValue, !id.isEmpty, id.count <= 64 else {
                throw ChangeInputError(path: path + ".rollout", message: "name the draft rollout by its id")
            }
            return .rolloutStart(id)
        default:
            throw ChangeInputError(
                path: path + ".kind",
                message: "expected one of \(kinds.joined(separator: ", "))"
            )
        }
    }

    /// The content hash reviewers approve: SHA-256 (hex) of the canonical encoding — object
    /// members sorted by name, compact — of the change with the version it is based on and the
    /// request's revision, title and description, so any edit is a new hash and an approval of
    /// the revision before it no longer matches.
    package func contentHash(baseVersion: Int64, revision: Int64, title: String, description: String) -> String {
        let document: JSONValue = .object([
            "baseVersion": .string(String(baseVersion)), "change": .object(json()),
            "revision": .string(String(revision)), "title": .string(title), "description": .string(description),
        ])
        let bytes = Self.canonical(document).serializedData(.compact)
        return SHA256.hash(data: bytes).withUnsafeBytes { Hex.encode($0) }
    }

    /// The value with every object's members sorted by name, recursively.
    static func canonical(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let object):
            let members = object.members.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
            return .object(JSONObject(members.map { JSONObject.Member(key: $0.key, value: canonical($0.value)) }))
        case .array(let array): return .array(array.map(canonical))
        default: return value
        }
    }
}

/// Where a change request is. draft → in_review → approved → (scheduled) → applied, or rejected
/// (until the author edits it), cancelled, or suspended (the live version moved under it and it
/// does not rebase cleanly, it went stale, or its scheduled time was missed by more than the grace).
package enum ChangeRequestState: String, Sendable, Hashable, CaseIterable {
    case draft
    case inReview = "in_review"
    case approved
    case scheduled
    case applied
    case rejected
    case cancelled
    case suspended

    /// Whether nothing can happen to the request any more but comments (and, after break-glass,
    /// the post-hoc review).
    package var isFinal: Bool { self == .applied || self == .cancelled }

    /// Whether a request in this state is approved and waits to apply, now or at its time.
    package var isApproved: Bool { self == .approved || self == .scheduled }
}

/// A reviewer's decision or comment, bound to the content hash and revision they saw.
package struct ChangeReview: Sendable, Hashable {
    package enum Decision: String, Sendable, Hashable {
        case approve, reject, comment
    }

    package var reviewerId: String
    package var reviewerName: String
    package var decision: Decision
    package var comment: String
    package var contentHash: String
    package var revision: Int64
    package var time: Int64

    package func json() -> JSONObject {
        [
            "reviewer": .string(reviewerName), "reviewerId": .string(reviewerId),
            "decision": .string(decision.rawValue), "comment": .string(comment),
            "contentHash": .string(contentHash), "revision": .number(JSONNumber(Int(revision))),
            "time": .string(Clock.rfc3339(milliseconds: time)),
        ]
    }
}

/// A proposed change of one environment, with its reviews.
package struct ChangeRequest: Sendable {
    package var id: String
    package var environment: EnvironmentKey
    /// The live version the change was proposed on.
    package var baseVersion: Int64
    package var change: ProposedChange
    package var contentHash: String
    /// Counts edits from 1; reviews of an earlier revision do not count.
    package var revision: Int64
    package var title: String
    package var description: String
    package var authorId: String
    package var authorName: String
    package var state: ChangeRequestState
    /// Why it is suspended, rejected or applied by break-glass.
    package var stateReason: String?
    /// The version it published (template and rollback), or the version live when it applied.
    package var appliedVersion: Int64?
    /// The reason given when it was applied by break-glass: it then awaits a post-hoc review.
    package var breakGlass: String?
    /// When it applies (milliseconds since 1970), while it is scheduled; kept once it applied as
    /// scheduled. Any other state change clears it.
    package var applyTime: Int64?
    package var createTime: Int64
    package var updateTime: Int64
    package var reviews: [ChangeReview]

    /// The content hash of the request as it is now (``ProposedChange/contentHash(baseVersion:revision:title:description:)``).
    package var computedHash: String {
        change.contentHash(baseVersion: baseVersion, revision: revision, title: title, description: description)
    }

    /// The reviews that count for the current revision.
    package var currentReviews: [ChangeReview] {
        reviews.filter { $0.revision == revision && $0.contentHash == contentHash && $0.decision != .comment }
    }

    /// How far ahead a request can be scheduled.
    package static let maximumScheduleMilliseconds: Int64 = 366 * 24 * 3_600_000

    /// Why a time to apply is refused, or nil: it must be in the future and at most a year ahead.
    package static func applyTimeProblem(_ applyTime: Int64, now: Int64) -> String? {
        if applyTime <= now {
            return "applyTime \(Clock.rfc3339(milliseconds: applyTime)) is not in the future (the server's time is "
                + "\(Clock.rfc3339(milliseconds: now))); give a later time, or apply the request now with …/apply"
        }
        if applyTime - now > maximumScheduleMilliseconds {
            return "applyTime \(Clock.rfc3339(milliseconds: applyTime)) is more than a year ahead; "
                + "schedule it at most a year from now"
        }
        return nil
    }

    package func json(policy: ChangePolicy) -> JSONObject {
        var object: JSONObject = [
            "id": .string(id),
            "project": .string(environment.projectId),
            "environment": .string(environment.environmentId),
            "state": .string(state.rawValue),
            "title": .string(title),
            "description": .string(description),
            "author": .string(authorName),
            "authorId": .string(authorId),
            "baseVersion": .string(String(baseVersion)),
            "revision": .number(JSONNumber(Int(revision))),
            "contentHash": .string(contentHash),
            "change": .object(change.json()),
            "approvals": .number(JSONNumber(ChangeApproval.approvals(of: self, under: policy).count)),
            "approvalsRequired": .number(JSONNumber(ChangeApproval.required(policy))),
            "reviews": .array(reviews.map { .object($0.json()) }),
            "createTime": .string(Clock.rfc3339(milliseconds: createTime)),
            "updateTime": .string(Clock.rfc3339(milliseconds: updateTime)),
        ]
        if let stateReason { object["stateReason"] = .string(stateReason) }
        if let appliedVersion { object["appliedVersion"] = .string(String(appliedVersion)) }
        if let breakGlass { object["breakGlass"] = .string(breakGlass) }
        if let applyTime { object["applyTime"] = .string(Clock.rfc3339(milliseconds: applyTime)) }
        return object
    }
}

/// The one rule of what counts as approval, for the review, the list and the publish
/// transaction alike (which counts again under the policy in force then).
package enum ChangeApproval {
    /// Approvals a request needs under a policy: at least one, also with no policy in force.
    package static func required(_ policy: ChangePolicy) -> Int { max(1, policy.approvalsRequired) }

    /// Whether a reviewer may approve or reject under a policy (the author only when the
    /// policy allows self-approval).
    package static func mayReview(_ reviewer: ChangeActor, authorId: String, under policy: ChangePolicy) -> String? {
        if reviewer.id == authorId && !policy.selfApproval {
            return
                "authors may not approve or reject their own change requests in this environment; ask another reviewer"
        }
        if !policy.approvers.isEmpty && !reviewer.isNamed(in: policy.approvers) {
            return
                "\(reviewer.actor.name) is not among this environment's approvers (\(policy.approvers.joined(separator: ", ")))"
        }
        return nil
    }

    /// The approvals that count: of the current revision and hash, one per reviewer, by
    /// reviewers the policy in force allows.
    package static func approvals(of request: ChangeRequest, under policy: ChangePolicy) -> [ChangeReview] {
        var seen: Set<String> = []
        return request.currentReviews.filter { review in
            guard review.decision == .approve, !seen.contains(review.reviewerId) else { return false }
            if review.reviewerId == request.authorId && !policy.selfApproval { return false }
            // Roles were checked when the review was given (storage does not know people's
            // roles); ids and names are checked again under the policy in force now.
            let named = policy.approvers.contains { entry in
                entry == review.reviewerId.lowercased() || entry == review.reviewerName.lowercased()
                    || entry.hasPrefix("role:")
            }
            if !policy.approvers.isEmpty && !named { return false }
            seen.insert(review.reviewerId)
            return true
        }
    }

    /// Why a request cannot apply now, or nil when it is approved.
    package static func blocker(_ request: ChangeRequest, under policy: ChangePolicy) -> String? {
        if let rejection = request.currentReviews.first(where: { $0.decision == .reject }) {
            return
                "\(rejection.reviewerName) rejected revision \(request.revision); the author edits the request (PATCH) to ask again"
        }
        let have = approvals(of: request, under: policy).count
        let need = required(policy)
        if have < need {
            return "it has \(have) of the \(need) approval(s) it needs"
                + (policy.selfApproval ? "" : " (an author's own approval does not count)")
                + "; ask a reviewer to approve revision \(request.revision)"
        }
        return nil
    }
}
