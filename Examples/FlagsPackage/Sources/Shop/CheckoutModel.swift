import Vane

/// What the checkout screen shows, decided by flags. It depends on `RemoteConfigReader`, so
/// tests hand it an `InMemoryConfig` and the app a `VaneClient`.
public struct CheckoutModel: Sendable {
    let flags: Flags

    /// Creates a model reading flags from `reader`.
    public init(reader: any RemoteConfigReader) {
        flags = Flags(reader)
    }

    /// Whether payment screens are shown (the kill switch).
    public var showsPayments: Bool { flags.paymentsEnabled }

    /// Whether the one-page checkout (variant B of the experiment) is shown.
    public var usesOnePageCheckout: Bool { flags.checkoutVariant == .onePage }

    /// Whether another item fits in a cart of `count` items.
    public func canAdd(toCartOf count: Int) -> Bool { count < flags.maxCartItems }

    /// The bundled defaults and debug-menu catalog, for the app's `VaneClient.Configuration`.
    public static var defaults: InAppDefaults { Flags.defaults }
    /// The declared keys, for the debug menu.
    public static var catalog: [KeyDescriptor] { Flags.catalog }
}
