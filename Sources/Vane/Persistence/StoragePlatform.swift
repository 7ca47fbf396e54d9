import Foundation

/// The facts about the running platform that decide where a client keeps its files and how they
/// are protected: read once by ``current``, injected by tests.
struct StoragePlatform: Sendable {
    var platform: RuntimePlatform
    /// Whether the App Sandbox confines the process (macOS): a sandboxed app's Application Support
    /// is inside its own container already.
    var isSandboxed: Bool
    /// The main bundle's identifier; nil for a command-line tool without an `Info.plist`.
    var bundleIdentifier: String?
    /// The executable's name, standing in for a missing bundle identifier.
    var processName: String
    /// The user's Application Support directory (Apple platforms).
    var applicationSupport: URL?
    /// The user's Caches directory (Apple platforms).
    var caches: URL?
    /// `$XDG_DATA_HOME`, or `~/.local/share` (other platforms).
    var dataHome: URL
    /// The shared container of an App Group, or nil when the app lacks the entitlement.
    var appGroupContainer: @Sendable (String) -> URL?

    /// The running process's facts, read once per process: they do not change while it runs, and
    /// reading them (the environment, Foundation's search paths) cost a seventh of an SDK start
    /// (docs/PERFORMANCE.md).
    static let current = read()

    private static func read() -> StoragePlatform {
        let process = ProcessInfo.processInfo
        let fileManager = FileManager.default
        let environment = process.environment
        let dataHome: URL
        if let path = environment["XDG_DATA_HOME"], !path.isEmpty {
            dataHome = URL(fileURLWithPath: path)
        } else {
            dataHome = fileManager.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
        }
        return StoragePlatform(
            platform: .current,
            // macOS sets APP_SANDBOX_CONTAINER_ID in a sandboxed process's environment; a
            // sandboxed app's home is its container (~/Library/Containers/<bundle id>/Data).
            // https://developer.apple.com/documentation/security/app_sandbox/accessing_files_from_the_macos_app_sandbox
            isSandboxed: environment["APP_SANDBOX_CONTAINER_ID"] != nil,
            bundleIdentifier: Bundle.main.bundleIdentifier,
            processName: process.processName,
            applicationSupport: fileManager.urls(for: .applicationSupportDirectory, in: .userDomainMask).first,
            caches: fileManager.urls(for: .cachesDirectory, in: .userDomainMask).first,
            dataHome: dataHome,
            appGroupContainer: { identifier in
                #if canImport(Darwin)
                // nil when the App Groups entitlement does not list the group.
                // https://developer.apple.com/documentation/foundation/filemanager/containerurl(forsecurityapplicationgroupidentifier:)
                return FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: identifier)
                #else
                return nil
                #endif
            }
        )
    }
}
