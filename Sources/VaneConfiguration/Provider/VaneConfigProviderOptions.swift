// The server SDK: compiled only with the `ServerSDK` trait, which brings its dependencies.
#if ServerSDK
@available(VaneServerSDK, *)
extension VaneConfigProvider {
    /// How the provider maps keys, contexts and secrets.
    public struct Options: Sendable {
        /// How swift-configuration keys become Vane keys (default ``VaneKeyMapping/snakeCase``).
        public var keyMapping: VaneKeyMapping
        /// How a lookup's context becomes Vane's evaluation context.
        public var contextMapping: VaneContextMapping
        /// Vane keys whose values are marked secret (`ConfigValue.isSecret`), so access reporters
        /// and logs redact them. Vane's templates carry no secret marker of their own: Vane refuses
        /// to publish values that look like credentials, so secrets belong in a secrets provider.
        public var secretKeys: Set<String>
        /// The provider's name in swift-configuration's logs (default `VaneConfigProvider`).
        public var name: String

        /// Creates options.
        ///
        /// ```swift
        /// let provider = VaneConfigProvider(service: vane, options: .init(secretKeys: ["partner_token"]))
        /// ```
        ///
        /// - Parameters:
        ///   - keyMapping: How swift-configuration keys become Vane keys.
        ///   - contextMapping: How a lookup's context becomes Vane's evaluation context.
        ///   - secretKeys: Vane keys whose values are marked secret.
        ///   - name: The provider's name in swift-configuration's logs.
        public init(
            keyMapping: VaneKeyMapping = .snakeCase,
            contextMapping: VaneContextMapping = VaneContextMapping(),
            secretKeys: Set<String> = [],
            name: String = "VaneConfigProvider"
        ) {
            self.keyMapping = keyMapping
            self.contextMapping = contextMapping
            self.secretKeys = secretKeys
            self.name = name
        }
    }
}
#endif
