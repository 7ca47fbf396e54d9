import VaneCore
import VaneServerCore

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
