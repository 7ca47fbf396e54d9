import Foundation

/// Walks console templates the way swift-mustache renders them, with a page's real data, and
/// records every name a template reads that the data does not have: swift-mustache renders such
/// a name as nothing, so a misspelt or removed field would otherwise leave a blank in the page.
///
/// Lookups follow swift-mustache: a name is searched from the innermost section outwards (a
/// field that is declared but nil lets the search go on outwards), `a.b` continues in what `a`
/// found, sections iterate arrays, test Booleans and push other values; `{{> partial}}`,
/// `{{< layout}}` and `{{$ block}}` are followed. Names in branches the data does not enter are
/// not reached; ``unreached`` lists them.
struct ConsoleTemplateNameCheck {
    /// A piece of a parsed template that reads a name or includes another template.
    indirect enum Node {
        case variable(id: Int, name: String)
        case section(id: Int, name: String, inverted: Bool, body: [Node])
        case partial(String)
        case parent(String, blocks: [String: [Node]])
        case block(String, body: [Node])
    }

    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    /// Each template's nodes, by name.
    private(set) var templates: [String: [Node]] = [:]
    /// Where each name-reading node is: "template: {{name}}".
    private var places: [Int: String] = [:]
    /// The nodes that rendering has reached.
    private var reachedIds: Set<Int> = []
    /// The templates that rendering has reached, directly or as partials and layouts.
    private(set) var renderedTemplates: Set<String> = []
    /// Every name a template read that its data did not have, with where.
    private(set) var problems: Set<String> = []

    init(sources: [String: String]) throws {
        var nextId = 0
        for (path, text) in sources where path.hasPrefix("templates/") && path.hasSuffix(".mustache") {
            let name = String(path.dropFirst("templates/".count).dropLast(".mustache".count))
            templates[name] = try Self.parse(text, template: name, nextId: &nextId, places: &places)
        }
    }

    /// The names no rendering reached, as "template: {{name}}".
    var unreached: [String] {
        places.filter { !reachedIds.contains($0.key) }.map(\.value).sorted()
    }

    /// Renders `template` with `data` in the mind's eye, recording every name it lacks.
    mutating func check(_ template: String, data: Any) {
        render(template, stack: [data], blocks: [:])
    }

    // MARK: Walking

    private mutating func render(_ template: String, stack: [Any], blocks: [String: [Node]]) {
        guard let nodes = templates[template] else {
            problems.insert("\(template): no such template")
            return
        }
        renderedTemplates.insert(template)
        walk(nodes, template: template, stack: stack, blocks: blocks)
    }

    private mutating func walk(_ nodes: [Node], template: String, stack: [Any], blocks: [String: [Node]]) {
        for node in nodes {
            switch node {
            case .variable(let id, let name):
                reachedIds.insert(id)
                if case .missing = Self.lookup(name, in: stack) { problems.insert(places[id] ?? name) }
            case .section(let id, let name, let inverted, let body):
                reachedIds.insert(id)
                let value: Any?
                switch Self.lookup(name, in: stack) {
                case .missing:
                    problems.insert(places[id] ?? name)
                    continue
                case .found(let found): value = found
                }
                for inner in Self.sectionStacks(value, stack: stack, inverted: inverted) {
                    walk(body, template: template, stack: inner, blocks: blocks)
                }
            case .partial(let name):
                render(name, stack: stack, blocks: blocks)
            case .parent(let name, let overrides):
                render(name, stack: stack, blocks: blocks.merging(overrides) { outer, _ in outer })
            case .block(let name, let body):
                walk(blocks[name] ?? body, template: template, stack: stack, blocks: blocks)
            }
        }
    }

    /// The stacks a section's body is rendered with: once per array element, once for a true
    /// Boolean or another value, never for nil, false or an empty array (inverted: the opposite).
    private static func sectionStacks(_ value: Any?, stack: [Any], inverted: Bool) -> [[Any]] {
        let truthy: Bool
        var pushed: [[Any]] = []
        switch value {
        case .none:
            truthy = false
        case let array as [Any]:
            truthy = !array.isEmpty
            pushed = array.map { stack + [$0] }
        case let bool as Bool:
            truthy = bool
            pushed = [stack]
        case .some(let other):
            truthy = true
            pushed = [stack + [other]]
        }
        if inverted { return truthy ? [] : [stack] }
        return truthy ? pushed : []
    }

    enum Lookup {
        case missing
        case found(Any?)
    }

    /// `name` as swift-mustache finds it in `stack`.
    static func lookup(_ name: String, in stack: [Any]) -> Lookup {
        if name == "." { return .found(stack.last) }
        let parts = name.split(separator: ".").map(String.init)
        guard let first = parts.first else { return .missing }
        var declared = false
        var value: Any?
        for object in stack.reversed() {
            guard case .found(let found) = child(first, of: object) else { continue }
            declared = true
            if found != nil {
                value = found
                break
            }
        }
        guard declared else { return .missing }
        for part in parts.dropFirst() {
            guard let current = value else { return .found(nil) }
            guard case .found(let found) = child(part, of: current) else { return .missing }
            value = found
        }
        return .found(value)
    }

    /// A field of a value (a dictionary's key or a stored property), optionals unwrapped.
    static func child(_ name: String, of object: Any) -> Lookup {
        if let dictionary = object as? [String: any Sendable] {
            guard let value = dictionary[name] else { return .missing }
            return .found(unwrap(value))
        }
        guard let match = Mirror(reflecting: object).children.first(where: { $0.label == name }) else {
            return .missing
        }
        return .found(unwrap(match.value))
    }

    private static func unwrap(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first?.value
    }

    // MARK: Parsing

    /// The template's tags as a tree; text between them is left out.
    static func parse(_ text: String, template: String, nextId: inout Int, places: inout [Int: String]) throws -> [Node]
    {
        // Each open section, layout or block: its tag and the nodes inside it so far.
        var open: [(tag: Character, name: String, nodes: [Node])] = [(" ", "", [])]
        var rest = text[...]
        func add(_ node: Node) { open[open.count - 1].nodes.append(node) }
        func place(_ tag: String) -> Int {
            nextId += 1
            places[nextId] = "\(template).mustache: {{\(tag)}}"
            return nextId
        }
        while let start = rest.range(of: "{{") {
            let triple = rest[start.upperBound...].hasPrefix("{")
            let closing = triple ? "}}}" : "}}"
            let from = triple ? rest.index(after: start.upperBound) : start.upperBound
            guard let end = rest[from...].range(of: closing) else {
                throw ParseError(description: "\(template): a tag is not closed")
            }
            let tag = rest[from..<end.lowerBound].trimmingCharacters(in: .whitespaces)
            rest = rest[end.upperBound...]
            if triple {
                add(.variable(id: place("{\(tag)}"), name: tag))
                continue
            }
            guard let kind = tag.first else { continue }
            let name = tag.dropFirst().trimmingCharacters(in: .whitespaces)
            switch kind {
            case "!": continue
            case "#", "^", "$", "<": open.append((kind, name, []))
            case ">": add(.partial(name))
            case "&": add(.variable(id: place(tag), name: name))
            case "=": throw ParseError(description: "\(template): delimiter changes are not supported")
            case "/":
                guard open.count > 1, let last = open.last, last.name == name else {
                    throw ParseError(description: "\(template): {{/\(name)}} closes nothing open")
                }
                open.removeLast()
                switch last.tag {
                case "$": add(.block(name, body: last.nodes))
                case "<":
                    var blocks: [String: [Node]] = [:]
                    for case .block(let block, let body) in last.nodes { blocks[block] = body }
                    add(.parent(name, blocks: blocks))
                default:
                    add(
                        .section(
                            id: place("\(last.tag)\(name)"),
                            name: name,
                            inverted: last.tag == "^",
                            body: last.nodes
                        )
                    )
                }
            default: add(.variable(id: place(tag), name: tag))
            }
        }
        guard open.count == 1, let root = open.first else {
            throw ParseError(
                description: "\(template): {{\(open.last?.tag ?? " ")\(open.last?.name ?? "")}} is not closed"
            )
        }
        return root.nodes
    }
}
