/// Reads a declared key each time the property is read.
///
/// ```swift
/// final class CheckoutViewModel {
///     @RemoteValue(.newCheckout) var newCheckout
///     @RemoteValue(.onboarding, reader: client) var onboarding
/// }
/// ```
///
/// Without a `reader`, the property reads ``RemoteConfigSystem/reader``, which the app sets once
/// at launch with ``RemoteConfigSystem/bootstrap(_:)``. `$property` gives the value's source.
@propertyWrapper
public struct RemoteValue<Value: Sendable>: Sendable {
    /// The key read.
    public let key: RemoteKey<Value>
    private let reader: (any RemoteConfigReader)?

    /// Reads `key` from `reader`, or from ``RemoteConfigSystem/reader`` when it is nil.
    /// - Parameters:
    ///   - key: A key declared as a static property of ``RemoteKeys``.
    ///   - reader: The reader to read from; nil reads ``RemoteConfigSystem/reader`` at each read.
    public init(_ key: RemoteKey<Value>, reader: (any RemoteConfigReader)? = nil) {
        self.key = key
        self.reader = reader
    }

    /// The key's current value.
    public var wrappedValue: Value {
        (reader ?? RemoteConfigSystem.reader).value(forKey: key)
    }

    /// Where the current value comes from, or nil when the key's default applies.
    public var projectedValue: ValueSource? {
        (reader ?? RemoteConfigSystem.reader).value(forKey: key.name)?.source
    }
}

/// The reader ``RemoteValue`` properties use when they are not given one.
///
/// Call ``bootstrap(_:)`` once at launch with the app's ``VaneClient``; until then every
/// property reads its key's default.
public enum RemoteConfigSystem {
    private static let current = LockedValue<any RemoteConfigReader>(RemoteConfigSnapshot([:]))

    /// Sets the reader ``RemoteValue`` properties use.
    ///
    /// ```swift
    /// let client = VaneClient(configuration: configuration)
    /// RemoteConfigSystem.bootstrap(client)        // once, at launch
    /// ```
    ///
    /// - Parameter reader: The app's ``VaneClient``, or an `InMemoryConfig` in tests.
    public static func bootstrap(_ reader: any RemoteConfigReader) {
        current.withLockedValue { $0 = reader }
    }

    /// The reader ``RemoteValue`` properties use.
    public static var reader: any RemoteConfigReader { current.withLockedValue { $0 } }
}
