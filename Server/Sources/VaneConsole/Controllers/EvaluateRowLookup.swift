import Mustache
import VaneServerCore

// Direct field lookups for the rows of "who gets what", which lists every key. swift-mustache
// finds a tag's value by reflecting (`Mirror`) over every field of the object for each tag.
// Names not listed here fall through to the page, as before. (The flags page writes its rows
// itself: FlagRowsHTML.)

extension EvaluateController.EvaluatePage.Row: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "key": key
        case "editHref": editHref
        case "title": title
        case "value": value
        case "source": source
        case "reason": reason
        case "condition": condition
        case "expression": expression
        case "compareValue": compareValue
        case "compareSource": compareSource
        case "compareReason": compareReason
        case "compareCondition": compareCondition
        case "differs": differs
        case "search": search
        case "conditions": conditions
        case "hasConditions": hasConditions
        default: nil
        }
    }
}
