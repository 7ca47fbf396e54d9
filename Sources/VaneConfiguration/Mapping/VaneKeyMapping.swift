// The server SDK: compiled only with the `ServerSDK` trait, which brings its dependencies.
#if ServerSDK
/// How a swift-configuration key becomes a Vane parameter key.
///
/// A swift-configuration key is a list of components (`"checkout.new-flow"` is
/// `["checkout", "new-flow"]`); Vane keys are flat strings, usually snake_case. The default,
/// ``snakeCase``, joins the components with `_` and turns dashes, dots and camelCase into
/// snake_case:
///
/// | swift-configuration key | Vane key (``snakeCase``) | Vane key (``identity``) |
/// |---|---|---|
/// | `checkout.new-flow` | `checkout_new_flow` | `checkout.new-flow` |
/// | `checkout.newFlow` | `checkout_new_flow` | `checkout.newFlow` |
/// | `http.maxRetryCount` | `http_max_retry_count` | `http.maxRetryCount` |
/// | `payments_enabled` | `payments_enabled` | `payments_enabled` |
///
/// Or give your own: `VaneKeyMapping { components in "shop_" + components.joined(separator: "_") }`.
@available(VaneServerSDK, *)
public struct VaneKeyMapping: Sendable {
    private let map: @Sendable ([String]) -> String

    /// A mapping by a function of the key's components.
    ///
    /// ```swift
    /// let prefixed = VaneKeyMapping { components in "shop_" + components.joined(separator: "_") }
    /// let provider = VaneConfigProvider(service: vane, options: .init(keyMapping: prefixed))
    /// ```
    ///
    /// - Parameter map: Returns the Vane key for a swift-configuration key's components.
    public init(_ map: @escaping @Sendable (_ components: [String]) -> String) {
        self.map = map
    }

    /// The Vane key for a swift-configuration key's components.
    /// - Parameter components: The key's components (`["checkout", "new-flow"]`).
    /// - Returns: The Vane parameter key (`checkout_new_flow` under ``snakeCase``).
    public func vaneKey(for components: [String]) -> String { map(components) }

    /// Components joined with `_`; dashes, dots and spaces become `_`; camelCase becomes
    /// snake_case (`maxRetryCount` → `max_retry_count`, `HTTPPort` → `http_port`); all lowercase.
    public static let snakeCase = VaneKeyMapping { components in
        components.map(snakeCased).joined(separator: "_")
    }

    /// Components joined with `.`, nothing else changed: `checkout.new-flow` stays `checkout.new-flow`.
    public static let identity = VaneKeyMapping { $0.joined(separator: ".") }

    /// One component in snake_case.
    static func snakeCased(_ component: String) -> String {
        let scalars = Array(component.unicodeScalars)
        var result = String.UnicodeScalarView()
        for index in scalars.indices {
            let scalar = scalars[index]
            if scalar == "-" || scalar == "." || scalar == " " {
                result.append("_")
                continue
            }
            let isUpper = scalar.properties.isUppercase
            if isUpper, index > 0 {
                let previous = scalars[index - 1]
                let nextIsLower = index + 1 < scalars.count && scalars[index + 1].properties.isLowercase
                let previousIsUpper = previous.properties.isUppercase
                let previousIsWordEnd = previous.properties.isLowercase || ("0"..."9").contains(previous)
                if previousIsWordEnd || (previousIsUpper && nextIsLower) { result.append("_") }
            }
            if isUpper {
                result.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }
}
#endif
