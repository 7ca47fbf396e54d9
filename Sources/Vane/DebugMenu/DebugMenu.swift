import Foundation
import VaneCore

/// What an in-app QA screen shows: sections of keys with their current values and sources.
///
/// Build one with ``VaneClient/debugMenu()``; ``DebugMenuModel`` keeps one up to date for SwiftUI.
/// Titles, sections and choices come from the server's metadata when it has them, else from the
/// keys the app declared (``VaneClient/Configuration/keys``), else from the key itself.
public struct DebugMenu: Sendable, Hashable {
    /// One key.
    public struct Item: Sendable, Hashable, Identifiable {
        /// The key.
        public var key: String
        /// A human name (the key when nothing better is known).
        public var title: String
        /// What the key controls.
        public var description: String?
        /// How to edit the value.
        public var kind: ValueKind
        /// The only values the key takes; empty for any.
        public var allowedValues: [String]
        /// The value reads return now, or nil when only the caller's default applies.
        public var value: String?
        /// Where ``value`` comes from.
        public var source: ValueSource?
        /// The default the app declared for the key.
        public var declaredDefault: String?

        /// The key, which identifies the item.
        public var id: String { key }
        /// Whether a local override sets the value.
        public var isOverridden: Bool { source == .override }
    }

    /// The items of one category.
    public struct Section: Sendable, Hashable, Identifiable {
        /// The category, or ``DebugMenu/uncategorized``.
        public var title: String
        /// The items, by title.
        public var items: [Item]

        /// The title, which identifies the section.
        public var id: String { title }
    }

    /// The title of the section for keys without a category.
    public static let uncategorized = "Other"

    /// The sections by title, ``uncategorized`` last.
    public var sections: [Section]

    /// The item for a key.
    /// - Parameter key: The key's name.
    /// - Returns: The key's item, or nil when the menu has none for it.
    public func item(forKey key: String) -> Item? {
        for section in sections {
            if let item = section.items.first(where: { $0.key == key }) { return item }
        }
        return nil
    }

    /// Builds the menu from what the app declared, what the server described and how values resolve.
    static func build(
        declared: [KeyDescriptor],
        metadata: [String: KeyMetadata],
        values: ResolvedValues
    ) -> DebugMenu {
        let declarations = Dictionary(declared.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var keys = Set(values.keys)
        keys.formUnion(declarations.keys)
        var sections: [String: [Item]] = [:]
        for key in keys {
            let declaration = declarations[key]
            // What the server says wins field by field; the app's declaration fills the rest.
            let details = (metadata[key] ?? KeyMetadata()).filling(from: declaration?.metadata)
            let resolved = values[key]
            let allowed = details.allowedValues
            let item = Item(
                key: key,
                title: details.title ?? key,
                description: details.description,
                kind: declaration?.kind ?? inferredKind(of: resolved?.value, allowedValues: allowed),
                allowedValues: allowed,
                value: resolved?.value.stringValue,
                source: resolved?.source,
                declaredDefault: declaration?.defaultValue
            )
            sections[details.category ?? uncategorized, default: []].append(item)
        }
        let ordered = sections.keys.sorted { lhs, rhs in
            if lhs == uncategorized || rhs == uncategorized { return rhs == uncategorized && lhs != uncategorized }
            return lhs.localizedStandardCompare(rhs) == .orderedAscending
        }
        return DebugMenu(
            sections: ordered.map { title in
                Section(
                    title: title,
                    items: (sections[title] ?? []).sorted {
                        ($0.title.lowercased(), $0.key) < ($1.title.lowercased(), $1.key)
                    }
                )
            }
        )
    }

    /// The editor for an undeclared key, guessed from its value.
    static func inferredKind(of value: CoercedValue?, allowedValues: [String]) -> ValueKind {
        guard let value, allowedValues.isEmpty else { return .string }
        let text = ValueCoercion.trimmed(value.stringValue).lowercased()
        if text == "true" || text == "false" { return .bool }
        if value.doubleValue != nil { return .number }
        if text.hasPrefix("{") || text.hasPrefix("[") { return .json }
        return .string
    }
}

/// A value the debug menu refused for a key, with what the key accepts.
public struct DebugMenuError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The key.
    public var key: String
    /// What is wrong and what is accepted.
    public var message: String

    /// The key and the problem.
    public var description: String { "\(key): \(message)" }
}

extension DebugMenu.Item {
    /// Checks that `value` fits the item: a Boolean, a number or JSON as its kind requires, one of
    /// its allowed values when it has them.
    /// - Parameter value: The value as text, as a tester typed it.
    /// - Throws: ``DebugMenuError`` saying what the item accepts.
    public func validate(_ value: String) throws(DebugMenuError) {
        if !allowedValues.isEmpty, !allowedValues.contains(value) {
            throw DebugMenuError(key: key, message: "expected one of \(allowedValues.joined(separator: ", "))")
        }
        let config = CoercedValue(value)
        switch kind {
        case .bool where config.boolValue == nil:
            throw DebugMenuError(key: key, message: "expected true or false, found \"\(value)\"")
        case .number where config.doubleValue == nil:
            throw DebugMenuError(key: key, message: "expected a number, found \"\(value)\"")
        case .json:
            do {
                _ = try JSONValue.parse(value)
            } catch {
                throw DebugMenuError(key: key, message: "expected JSON: \(error.description)")
            }
        default:
            break
        }
    }
}

extension VaneClient {
    /// The debug menu as things stand now.
    ///
    /// ```swift
    /// for section in client.debugMenu().sections { print(section.title, section.items.map(\.key)) }
    /// ```
    ///
    /// - Returns: Every key in sections by category, with its value, source and override.
    public func debugMenu() -> DebugMenu {
        let (metadata, values) = stateForDebugMenu()
        return DebugMenu.build(declared: configuration.keys, metadata: metadata, values: values)
    }

    /// Overrides a key from the debug menu after checking the value fits it.
    ///
    /// ```swift
    /// try client.setOverrideChecked("25", forKey: "max_items")
    /// ```
    ///
    /// - Parameters:
    ///   - value: The value as text.
    ///   - key: The key's name.
    /// - Throws: ``DebugMenuError`` when it does not; nothing changes then.
    public func setOverrideChecked(_ value: String, forKey key: String) throws(DebugMenuError) {
        if let item = debugMenu().item(forKey: key) { try item.validate(value) }
        setOverride(value, forKey: key)
    }
}
