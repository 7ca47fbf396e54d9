import VaneCore

/// What ``ConfigTemplate/validate(options:)`` enforces.
public struct ValidationOptions: Sendable, Hashable {
    /// The most parameters a template may have (Firebase: 3,000).
    public var maximumParameters: Int
    /// The most conditions a template may have (Firebase: 2,000).
    public var maximumConditions: Int
    /// The most characters all values may have together (Firebase: 1,000,000).
    public var maximumValueCharacters: Int
    /// The longest version description (Firebase: 1,024 characters).
    public var maximumVersionDescription: Int
    /// The longest parameter key (Firebase: 256 characters).
    public var maximumKeyLength: Int
    /// The longest parameter or group description (Firebase: 256 characters).
    public var maximumDescription: Int
    /// Whether values that look like credentials are accepted everywhere. Prefer allowing them
    /// per parameter with `"vane": {"allowSecrets": true}`.
    public var allowSecrets: Bool

    /// Creates options; the defaults are Firebase's limits.
    public init(
        maximumParameters: Int = 3000,
        maximumConditions: Int = 2000,
        maximumValueCharacters: Int = 1_000_000,
        maximumVersionDescription: Int = 1024,
        maximumKeyLength: Int = 256,
        maximumDescription: Int = 256,
        allowSecrets: Bool = false
    ) {
        self.maximumParameters = maximumParameters
        self.maximumConditions = maximumConditions
        self.maximumValueCharacters = maximumValueCharacters
        self.maximumVersionDescription = maximumVersionDescription
        self.maximumKeyLength = maximumKeyLength
        self.maximumDescription = maximumDescription
        self.allowSecrets = allowSecrets
    }

    /// Firebase's limits; no credentials.
    public static let `default` = ValidationOptions()
}
