/// One option of a `<select>` (or a radio group) on a console page: what the form sends, what
/// people read, and whether it is the current choice. Every page's choosers use it.
struct SelectOption: Sendable {
    var value: String
    var label: String
    var selected: Bool
}
