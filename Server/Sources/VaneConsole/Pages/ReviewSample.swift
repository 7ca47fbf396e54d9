import Foundation
import VaneAuthoring
import VaneCore
import VaneServerCore

/// "Who would see a different value" in words: a row per flag whose value changes for some of
/// the sampled users, or a note saying why there are none. The draft review and the change
/// request review show it, and ``DraftAnalysisCache`` keeps it per draft.
struct ReviewSample: Sendable {
    struct Row: Sendable {
        var key: String
        var href: String?
        var changed: String
        var noneChange: Bool
        /// Why nobody's value changes, when it is known (a shadowed value); set by the page.
        var reason: String?
    }

    var rows: [Row]
    var note: String?

    /// ``ValueChangeSample/estimate(from:to:diff:savedContexts:at:)`` (the API's rule) in words,
    /// for the change from `live` to `proposed`; each key links under `flagsBase` while
    /// `proposed` has it.
    static func estimate(
        live: ConfigTemplate,
        proposed: ConfigTemplate,
        diff: TemplateDiff,
        savedContexts saved: [SavedContext],
        at now: Date,
        flagsBase: String
    ) -> ReviewSample {
        switch ValueChangeSample.estimate(from: live, to: proposed, diff: diff, savedContexts: saved, at: now) {
        case .noValueChanges:
            return ReviewSample(
                rows: [],
                note: "No user's value changes: the change touches only descriptions, titles or unused conditions."
            )
        case .doesNotCompile:
            return ReviewSample(rows: [], note: "Fix the errors below to see how many users' values change.")
        case .counts(let counts, let savedCount):
            let rows = counts.map { count in
                let share = count.of == 0 ? 0 : Double(count.changed) * 100 / Double(count.of)
                return Row(
                    key: count.key,
                    href: proposed.parameter(forKey: count.key) == nil
                        ? nil : "\(flagsBase)/\(ConsolePaths.encode(count.key))/edit",
                    changed: "\(count.changed) of \(count.of) (\(percentText(share)))",
                    noneChange: count.changed == 0,
                    reason: nil
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
}
