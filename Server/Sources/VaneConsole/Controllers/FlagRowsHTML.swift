import VaneServerCore

/// The rows of the flags table, written straight to HTML.
///
/// The flags page lists every flag of an environment (3,000 in the benchmark) so that filtering
/// is instant; through swift-mustache each row's tags cost a reflective lookup (`Mirror`) and a
/// `Character`-wise escape, which made that page take over 300 ms. Written here, byte-wise, the
/// rows cost a few milliseconds. The markup is the one `flags.mustache` had, and every value goes
/// through ``MarkupEscaping``, as the templates escape theirs. The bytes go into the response as
/// they are (``ConsolePageRenderer/Spliced``).
enum FlagRowsHTML {
    static func html(_ rows: [FlagsController.FlagsPage.Row]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(rows.count * 700)
        func raw(_ text: String) { out.append(contentsOf: text.utf8) }
        func text(_ text: String) { MarkupEscaping.append(text, to: &out) }
        for row in rows {
            raw("<tr data-search=\"")
            text(row.search)
            raw("\">\n  <th scope=\"row\" data-label=\"Key\"><a class=\"mono\" href=\"")
            text(row.editHref)
            raw("\">")
            text(row.key)
            raw("</a>")
            if let href = row.rolloutHref, let id = row.rolloutId {
                raw(" <a class=\"tag flag-rollout\" href=\"")
                text(href)
                raw("\">rollout ")
                text(id)
                raw("</a>")
            }
            if let mark = row.draftMark {
                raw(" <span class=\"tag tag-")
                text(mark)
                raw("\">")
                text(mark)
                raw(" in your draft</span>")
            }
            if let title = row.title {
                raw("<br><span class=\"muted\">")
                text(title)
                raw("</span>")
            }
            raw("</th>\n  <td data-label=\"Type\">")
            text(row.type)
            raw("</td>\n  <td data-label=\"Value for everyone else\"><code class=\"value\">")
            text(row.value)
            raw("</code></td>\n  <td data-label=\"Conditional values\">")
            raw(String(row.conditionalCount))
            raw("</td>\n  <td data-label=\"Realtime\">")
            raw(row.realtime ? "<span class=\"tag\">realtime</span>" : "<span class=\"muted\">no</span>")
            raw("</td>\n  <td data-label=\"Category\">")
            text(row.category)
            // A cell with nothing in it has no label, so a phone's card shows no empty heading.
            if let change = row.lastChange {
                raw("</td>\n  <td data-label=\"Last change\">")
                text(change)
            } else {
                raw("</td>\n  <td>")
            }
            raw(row.switchable || row.copyHref != nil ? "</td>\n  <td data-label=\"Actions\">" : "</td>\n  <td>")
            if row.switchable {
                raw("<span class=\"state state-")
                text(row.stateClass)
                raw("\">")
                text(row.stateLabel)
                raw("</span>")
                if row.canPublish {
                    raw(" <a class=\"button small\" href=\"")
                    text(row.switchHref)
                    raw("\" aria-label=\"")
                    text(row.switchLabel + " " + row.key)
                    raw("\">")
                    text(row.switchLabel)
                    raw("</a>")
                }
            }
            if let copy = row.copyHref {
                raw(" <a class=\"button small\" href=\"")
                text(copy)
                raw("\" aria-label=\"")
                text("Copy " + row.key + " to another environment")
                raw("\">Copy</a>")
            }
            raw("</td>\n</tr>\n")
        }
        return out
    }
}
