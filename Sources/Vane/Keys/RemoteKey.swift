import Foundation
import VaneCore

/// The namespace for declared keys: extend it with a static property per key.
///
/// ```swift
/// extension RemoteKeys {
///     static let newCheckout = FeatureFlag("new_checkout", default: false, title: "New checkout")
///     static let maxItems = RemoteKey("max_items", default: 20)
///     static let onboarding = RemoteKey(experiment: "onboarding_flow", default: OnboardingVariant.control)
///     static let settings = RemoteKey(json: "settings_layout", default: SettingsLayout.standard)
/// }
///
/// if client[.newCheckout] { … }
/// let limit = client[.maxItems]
/// switch client[.onboarding] { … }
/// ```
///
/// Every ``RemoteKey`` is a `RemoteKeys`, so `.newCheckout` is found wherever a key is expected
/// and the value's type follows from the declaration.
public class RemoteKeys: @unchecked Sendable {
    // No stored state: the base class only gives declarations a common namespace.
    init() {}
}

/// A config key declared once, with its value type and default.
///
/// Declare keys as static properties of ``RemoteKeys``; every read is then typed and a typo is a
/// compile error. Reads of a value that does not fit `Value` return ``defaultValue`` and report
/// a ``TypeMismatch``.
public final class RemoteKey<Value: Sendable>: RemoteKeys, @unchecked Sendable {
    /// The key as the server and the defaults file spell it.
    public let name: String
    /// The value used when no override, remote value or bundled default reads as `Value`.
    public let defaultValue: Value
    /// What the debug menu shows and how it lists the key.
    public let descriptor: KeyDescriptor
    @usableFromInline let read: @Sendable (CoercedValue) -> Value?
    let write: @Sendable (Value) -> String

    /// Creates a key of any type from its reading and writing functions.
    ///
    /// - Parameters:
    ///   - name: The key.
    ///   - defaultValue: The caller's default.
    ///   - descriptor: The debug-menu details; its `name` and `defaultValue` are replaced by the key's.
    ///   - read: The value a config value reads as, or nil when it is not one.
    ///   - write: The text a value is stored as (for overrides).
    public init(
        _ name: String,
        default defaultValue: Value,
        descriptor: KeyDescriptor,
        read: @escaping @Sendable (CoercedValue) -> Value?,
        write: @escaping @Sendable (Value) -> String
    ) {
        self.name = name
        self.defaultValue = defaultValue
        var descriptor = descriptor
        descriptor.name = name
        descriptor.defaultValue = write(defaultValue)
        self.descriptor = descriptor
        self.read = read
        self.write = write
    }

    /// The value a config value reads as, or nil when it is not one.
    /// - Parameter configValue: A value as any source holds it.
    /// - Returns: The value read as `Value`, or nil when it does not read so.
    public func value(from configValue: CoercedValue) -> Value? { read(configValue) }

    /// The text a value is stored as.
    /// - Parameter value: A value of the key's type.
    /// - Returns: Its text, as an override or a defaults file holds it.
    public func text(for value: Value) -> String { write(value) }
}

/// A Boolean key: a feature flag.
public typealias FeatureFlag = RemoteKey<Bool>

extension KeyDescriptor {
    /// A descriptor with the details every convenience initializer takes.
    static func details(
        _ kind: ValueKind,
        _ typeName: String,
        title: String?,
        description: String?,
        category: String?,
        allowedValues: [String] = [],
        realtime: Bool
    ) -> KeyDescriptor {
        KeyDescriptor(
            name: "",
            kind: kind,
            typeName: typeName,
            defaultValue: "",
            title: title,
            description: description,
            category: category,
            allowedValues: allowedValues,
            realtime: realtime
        )
    }
}

extension RemoteKey where Value == Bool {
    /// Declares a feature flag.
    ///
    /// ```swift
    /// extension RemoteKeys {
    ///     static let newCheckout = FeatureFlag("new_checkout", default: false)
    ///     static let paymentsEnabled = FeatureFlag("payments_enabled", default: true, realtime: true)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The key's name on the server.
    ///   - defaultValue: What reads return when no source has a Boolean for the key.
    ///   - title: A short human name for the debug menu.
    ///   - description: What the key does, for the debug menu.
    ///   - category: The debug menu's section for the key.
    ///   - realtime: Whether live updates may apply a new value at once (a kill switch).
    public convenience init(
        _ name: String,
        default defaultValue: Bool,
        title: String? = nil,
        description: String? = nil,
        category: String? = nil,
        realtime: Bool = false
    ) {
        self.init(
            name,
            default: defaultValue,
            descriptor: .details(
                .bool,
                "Bool",
                title: title,
                description: description,
                category: category,
                realtime: realtime
            ),
            read: { $0.boolValue },
            write: { $0 ? "true" : "false" }
        )
    }
}

extension RemoteKey where Value == Int {
    /// Declares an integer key.
    ///
    /// ```swift
    /// extension RemoteKeys {
    ///     static let maxItems = RemoteKey("max_items", default: 20)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The key's name on the server.
    ///   - defaultValue: What reads return when no source has an integer for the key.
    ///   - title: A short human name for the debug menu.
    ///   - description: What the key does, for the debug menu.
    ///   - category: The debug menu's section for the key.
    ///   - realtime: Whether live updates may apply a new value at once (a kill switch).
    public convenience init(
        _ name: String,
        default defaultValue: Int,
        title: String? = nil,
        description: String? = nil,
        category: String? = nil,
        realtime: Bool = false
    ) {
        self.init(
            name,
            default: defaultValue,
            descriptor: .details(
                .number,
                "Int",
                title: title,
                description: description,
                category: category,
                realtime: realtime
            ),
            read: { $0.intValue },
            write: { String($0) }
        )
    }
}

extension RemoteKey where Value == Double {
    /// Declares a number key.
    ///
    /// ```swift
    /// extension RemoteKeys {
    ///     static let discountRate = RemoteKey("discount_rate", default: 0.1)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The key's name on the server.
    ///   - defaultValue: What reads return when no source has a number for the key.
    ///   - title: A short human name for the debug menu.
    ///   - description: What the key does, for the debug menu.
    ///   - category: The debug menu's section for the key.
    ///   - realtime: Whether live updates may apply a new value at once (a kill switch).
    public convenience init(
        _ name: String,
        default defaultValue: Double,
        title: String? = nil,
        description: String? = nil,
        category: String? = nil,
        realtime: Bool = false
    ) {
        self.init(
            name,
            default: defaultValue,
            descriptor: .details(
                .number,
                "Double",
                title: title,
                description: description,
                category: category,
                realtime: realtime
            ),
            read: { $0.doubleValue },
            write: { JSONNumber($0).text }
        )
    }
}

extension RemoteKey where Value == String {
    /// Declares a string key; `allowedValues` lists the choices the debug menu offers.
    ///
    /// ```swift
    /// extension RemoteKeys {
    ///     static let banner = RemoteKey("banner_text", default: "Welcome!")
    ///     static let theme = RemoteKey("theme", default: "light", allowedValues: ["light", "dark"])
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The key's name on the server.
    ///   - defaultValue: What reads return when no source has the key.
    ///   - allowedValues: The choices the debug menu offers; any text still reads.
    ///   - title: A short human name for the debug menu.
    ///   - description: What the key does, for the debug menu.
    ///   - category: The debug menu's section for the key.
    ///   - realtime: Whether live updates may apply a new value at once (a kill switch).
    public convenience init(
        _ name: String,
        default defaultValue: String,
        allowedValues: [String] = [],
        title: String? = nil,
        description: String? = nil,
        category: String? = nil,
        realtime: Bool = false
    ) {
        self.init(
            name,
            default: defaultValue,
            descriptor: .details(
                .string,
                "String",
                title: title,
                description: description,
                category: category,
                allowedValues: allowedValues,
                realtime: realtime
            ),
            read: { $0.stringValue },
            write: { $0 }
        )
    }
}

extension RemoteKey where Value: Codable {
    /// Declares a key whose value is JSON decoded into `Value` (a settings layout, say).
    ///
    /// A value that does not decode is a type mismatch: the read returns `defaultValue`.
    ///
    /// ```swift
    /// struct SettingsLayout: Codable { var sections: [String] }
    /// extension RemoteKeys {
    ///     static let layout = RemoteKey(json: "settings_layout", default: SettingsLayout(sections: ["account"]))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The key's name on the server.
    ///   - defaultValue: What reads return when no source has JSON that decodes into `Value`.
    ///   - title: A short human name for the debug menu.
    ///   - description: What the key does, for the debug menu.
    ///   - category: The debug menu's section for the key.
    ///   - realtime: Whether live updates may apply a new value at once (a kill switch).
    public convenience init(
        json name: String,
        default defaultValue: Value,
        title: String? = nil,
        description: String? = nil,
        category: String? = nil,
        realtime: Bool = false
    ) {
        self.init(
            name,
            default: defaultValue,
            descriptor: .details(
                .json,
                String(describing: Value.self),
                title: title,
                description: description,
                category: category,
                realtime: realtime
            ),
            read: { try? $0.decode(Value.self) },
            write: { value in
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            }
        )
    }
}

extension RemoteKey where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
    /// Declares an A/B test whose variants are the cases of an enum.
    ///
    /// The remote value is a variant's raw value; a value that names no case (a variant the app
    /// does not know yet) reads as `defaultVariant`, so older app versions stay in the control group.
    ///
    /// ```swift
    /// enum CheckoutVariant: String, CaseIterable, Sendable { case control, onePage = "one_page" }
    /// extension RemoteKeys {
    ///     static let checkout = RemoteKey(experiment: "checkout_variant", default: CheckoutVariant.control)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The key's name on the server.
    ///   - defaultVariant: The variant reads return when no source names a case (the control group).
    ///   - title: A short human name for the debug menu.
    ///   - description: What the key does, for the debug menu.
    ///   - category: The debug menu's section for the key.
    ///   - realtime: Whether live updates may apply a new value at once (a kill switch).
    public convenience init(
        experiment name: String,
        default defaultVariant: Value,
        title: String? = nil,
        description: String? = nil,
        category: String? = nil,
        realtime: Bool = false
    ) {
        self.init(
            name,
            default: defaultVariant,
            descriptor: .details(
                .variant,
                String(describing: Value.self),
                title: title,
                description: description,
                category: category,
                allowedValues: Value.allCases.map(\.rawValue),
                realtime: realtime
            ),
            read: { Value(rawValue: ValueCoercion.trimmed($0.stringValue)) },
            write: { $0.rawValue }
        )
    }
}

/// How a value is edited in a debug menu.
public enum ValueKind: String, Sendable, Hashable, CaseIterable {
    /// On or off: a toggle.
    case bool
    /// A number: a text field with a numeric keyboard.
    case number
    /// Free text (or a picker when the key has allowed values).
    case string
    /// JSON text.
    case json
    /// One of an experiment's variants: a picker.
    case variant
}

/// A key's type-independent description: what a debug menu lists and generated catalogs hold.
public struct KeyDescriptor: Sendable, Hashable {
    /// The key.
    public var name: String
    /// How the value is edited.
    public var kind: ValueKind
    /// The value type's Swift name.
    public var typeName: String
    /// The declared default, as text.
    public var defaultValue: String
    /// The key's title, description, section, allowed values and realtime marker.
    public var metadata: KeyMetadata

    /// Creates a descriptor.
    /// - Parameters:
    ///   - name: The key.
    ///   - kind: How the value is edited.
    ///   - typeName: The value type's Swift name.
    ///   - defaultValue: The declared default, as text.
    ///   - metadata: The key's title, description, section, allowed values and realtime marker.
    public init(name: String, kind: ValueKind, typeName: String, defaultValue: String, metadata: KeyMetadata) {
        self.name = name
        self.kind = kind
        self.typeName = typeName
        self.defaultValue = defaultValue
        self.metadata = metadata
    }

    /// Creates a descriptor from the metadata's fields (the form generated catalogs use).
    /// - Parameters:
    ///   - name: The key.
    ///   - kind: How the value is edited.
    ///   - typeName: The value type's Swift name.
    ///   - defaultValue: The declared default, as text.
    ///   - title: A short human name for the debug menu.
    ///   - description: What the key does, for the debug menu.
    ///   - category: The debug menu's section for the key.
    ///   - realtime: Whether live updates may apply a new value at once (a kill switch).
    ///   - allowedValues: The choices the debug menu offers.
    public init(
        name: String,
        kind: ValueKind,
        typeName: String,
        defaultValue: String,
        title: String? = nil,
        description: String? = nil,
        category: String? = nil,
        allowedValues: [String] = [],
        realtime: Bool = false
    ) {
        self.init(
            name: name,
            kind: kind,
            typeName: typeName,
            defaultValue: defaultValue,
            metadata: KeyMetadata(
                title: title,
                description: description,
                category: category,
                allowedValues: allowedValues,
                realtime: realtime
            )
        )
    }

    /// A short human name.
    public var title: String? {
        get { metadata.title }
        set { metadata.title = newValue }
    }
    /// What the key controls.
    public var description: String? {
        get { metadata.description }
        set { metadata.description = newValue }
    }
    /// The debug-menu section.
    public var category: String? {
        get { metadata.category }
        set { metadata.category = newValue }
    }
    /// The only values the key takes (an experiment's variants); empty for any.
    public var allowedValues: [String] {
        get { metadata.allowedValues }
        set { metadata.allowedValues = newValue }
    }
    /// Whether a live update may apply a new value at once.
    public var realtime: Bool {
        get { metadata.realtime }
        set { metadata.realtime = newValue }
    }
}
