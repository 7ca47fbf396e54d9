/// The operating system the SDK runs on, as the platform decisions (storage, `device.os`) see it.
///
/// Only ``current`` reads the compiler's conditions; everything else decides from a value of this
/// type, so those decisions are tested on any machine.
enum RuntimePlatform: Sendable, Hashable, CaseIterable {
    case iOS
    /// An iPad app built for the Mac with Mac Catalyst: `os(iOS)` is true, but it runs on macOS.
    case macCatalyst
    case macOS
    case tvOS
    case watchOS
    case visionOS
    case linux
    case other

    /// The platform this build runs on.
    static var current: RuntimePlatform {
        // `targetEnvironment(macCatalyst)` first: a Catalyst build also satisfies `os(iOS)`.
        // https://developer.apple.com/documentation/xcode/running-your-ipad-app-on-a-mac
        #if targetEnvironment(macCatalyst)
        return .macCatalyst
        #elseif os(iOS)
        return .iOS
        #elseif os(macOS)
        return .macOS
        #elseif os(tvOS)
        return .tvOS
        #elseif os(watchOS)
        return .watchOS
        #elseif os(visionOS)
        return .visionOS
        #elseif os(Linux)
        return .linux
        #else
        return .other
        #endif
    }

    /// `device.os` as conditions name it: a Catalyst app is a Mac app to its users.
    var deviceOS: String {
        switch self {
        case .iOS: "ios"
        case .macCatalyst, .macOS: "macos"
        case .tvOS: "tvos"
        case .watchOS: "watchos"
        case .visionOS: "visionos"
        case .linux: "linux"
        case .other: "unknown"
        }
    }
}
