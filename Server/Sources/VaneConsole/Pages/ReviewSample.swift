/// "Who would see a different value" in words: a row per flag whose value changes for some of
/// the sampled users, or a note saying why there are none. The review shows it, and
/// ``DraftAnalysisCache`` keeps it per draft.
struct ReviewSample: Sendable {
    struct Row: Sendable {
        var key: String
        var href: String?
        var changed: String
        var noneChange: Bool
    }

    var rows: [Row]
    var note: String?
}
