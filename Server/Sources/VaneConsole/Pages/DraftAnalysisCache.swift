import Foundation
import NIOConcurrencyHelpers
import VaneAuthoring
import VaneCore
import VaneServerCore

/// What a person's draft changes against the live version, worked out once per draft and live
/// version on this node rather than on every page: the flags page marks the draft's flags and
/// the review page shows the diff, the validation problems and the sampled users, and on a
/// template of thousands of flags each costs more than rendering the page.
///
/// An analysis is kept under the draft's ``Draft/revision`` (which changes whenever its text
/// does, on any node), its base version and the live version, so it is never used for anything
/// but the exact draft and live template it was made from. Saving a draft records the diff it
/// computed anyway, so even the first page after an edit finds it.
final class DraftAnalysisCache: Sendable {
    /// One draft against one live version.
    struct Analysis: Sendable {
        var revision: UInt64
        var baseVersion: Int64
        var liveVersion: Int64
        /// The live template against the draft.
        var diff: TemplateDiff
        /// The draft's validation problems, once a review has asked for them.
        var issues: [ValidationIssue]?
        /// The sampled users, with the saved contexts they were sampled with and when.
        var sample: Sample?
    }

    /// A review's sample and what it depends on besides the templates.
    struct Sample: Sendable {
        var savedContexts: [SavedContext]
        var time: Date
        var value: ReviewSample
    }

    /// How long a sample is reused: `dateTime` rules are evaluated at the time of the review.
    static let sampleLifetime: TimeInterval = 60
    /// How many drafts a node keeps analyses of.
    private static let limit = 64
    private let entries = NIOLockedValueBox<[String: Analysis]>([:])

    /// The analysis of this draft against this live version, if this node has it.
    func analysis(of draft: Draft, liveVersion: Int64) -> Analysis? {
        entries.withLockedValue { $0[draft.personKey] }.flatMap {
            $0.revision == draft.revision && $0.baseVersion == draft.baseVersion && $0.liveVersion == liveVersion
                ? $0 : nil
        }
    }

    /// The diff from the live template to the draft, computed once.
    func diff(of draft: Draft, live: ConfigTemplate, liveVersion: Int64) -> TemplateDiff {
        if let known = analysis(of: draft, liveVersion: liveVersion) { return known.diff }
        let diff = TemplateDiff(from: live, to: draft.template)
        keep(
            Analysis(revision: draft.revision, baseVersion: draft.baseVersion, liveVersion: liveVersion, diff: diff),
            for: draft
        )
        return diff
    }

    /// Keeps an analysis, replacing the draft's previous one.
    func keep(_ analysis: Analysis, for draft: Draft) {
        let key = draft.personKey
        entries.withLockedValue { entries in
            if entries.count >= Self.limit, entries[key] == nil { entries.removeAll() }
            entries[key] = analysis
        }
    }
}
