public import Foundation
public import VaneCore

/// Who this app instance is, as the server's conditions see it.
///
/// ``current(bundle:)`` fills in the app version and build from the bundle, and the OS, language
/// and country from the device. Add a user id once someone signs in (it replaces the installation
/// id for percent rollouts, so a user keeps their variant across devices) and custom signals for
/// targeting (`app.customSignal['plan'].exactlyMatches(['pro'])`).
///
/// Changing the context makes the next fetch go to the server even inside the minimum fetch
/// interval: values evaluated for the old context may not fit the new one.
public struct ClientContext: Sendable, Hashable {
    /// The signed-in user's id; used for bucketing instead of the installation id.
    public var userId: String?
    /// `app.version`: the marketing version, `2.4.0`.
    public var appVersion: String?
    /// `app.build`: the build number.
    public var appBuild: String?
    /// `app.id`: the bundle identifier.
    public var appId: String?
    /// `device.os`: `ios`, `macos` (also a Mac Catalyst app), `tvos`, `watchos`, `visionos` or `linux`.
    public var os: String?
    /// `device.language`: a BCP 47 tag such as `de-CH`.
    public var language: String?
    /// `device.country`: an ISO 3166-1 alpha-2 code such as `CH`.
    public var country: String?
    /// Custom signals: `app.customSignal['name']` in conditions.
    public var signals: [String: AttributeValue]

    /// Creates a context with exactly the given attributes.
    ///
    /// ```swift
    /// var configuration = VaneClient.Configuration(
    ///     serverURL: serverURL, project: "shop", environment: "production", clientKey: clientKey)
    /// configuration.context.signals["plan"] = .string("pro")     // current() is the default
    ///
    /// client.updateContext { $0.userId = account.id }           // later, after sign-in
    /// ```
    ///
    /// - Parameters:
    ///   - userId: The signed-in user's id; percent rollouts bucket by it instead of the
    ///     installation id.
    ///   - appVersion: `app.version`, the marketing version.
    ///   - appBuild: `app.build`, the build number.
    ///   - appId: `app.id`, the bundle identifier.
    ///   - os: `device.os`: `ios`, `macos`, `tvos`, `watchos`, `visionos` or `linux`.
    ///   - language: `device.language`, a BCP 47 tag.
    ///   - country: `device.country`, an ISO 3166-1 alpha-2 code.
    ///   - signals: Custom signals, `app.customSignal['name']` in conditions.
    public init(
        userId: String? = nil,
        appVersion: String? = nil,
        appBuild: String? = nil,
        appId: String? = nil,
        os: String? = nil,
        language: String? = nil,
        country: String? = nil,
        signals: [String: AttributeValue] = [:]
    ) {
        self.userId = userId
        self.appVersion = appVersion
        self.appBuild = appBuild
        self.appId = appId
        self.os = os
        self.language = language
        self.country = country
        self.signals = signals
    }

    /// The context of the running app: version, build and id from the bundle; OS, language and
    /// country from the device.
    /// - Parameter bundle: The bundle whose `Info.plist` gives the version, build and identifier.
    /// - Returns: A context without a user id or custom signals.
    public static func current(bundle: Bundle = .main) -> ClientContext {
        let info = bundle.infoDictionary ?? [:]
        let locale = Locale.current
        return ClientContext(
            appVersion: info["CFBundleShortVersionString"] as? String,
            appBuild: info["CFBundleVersion"] as? String,
            appId: bundle.bundleIdentifier,
            os: currentOS,
            language: Locale.preferredLanguages.first ?? locale.identifier.replacingOccurrences(of: "_", with: "-"),
            country: regionCode(of: locale)
        )
    }

    static func regionCode(of locale: Locale) -> String? {
        if #available(iOS 16, macOS 13, tvOS 16, watchOS 9, *) { return locale.region?.identifier }
        return locale.regionCode
    }

    /// The running OS as `device.os` names it (a Mac Catalyst app is `macos`).
    public static var currentOS: String { RuntimePlatform.current.deviceOS }

    /// The engine's context: the user id (or else `installationId`) as randomization id, and
    /// every attribute that is set.
    /// - Parameter installationId: The randomization id when no user id is set.
    /// - Returns: The context the engine evaluates conditions for.
    public func evaluationContext(installationId: String) -> EvaluationContext {
        var context = EvaluationContext(randomizationId: userId ?? installationId, attributes: signals)
        let builtIn: [(ConditionElement, String?)] = [
            (.appVersion, appVersion), (.appBuild, appBuild), (.appId, appId), (.deviceOS, os),
            (.deviceLanguage, language), (.deviceCountry, country),
        ]
        for (element, value) in builtIn {
            if let value { context[element] = .string(value) }
        }
        return context
    }
}
