public import Foundation

/// Where a client keeps its files: the config cache, local overrides, the installation id and the
/// event queue.
///
/// docs/SDK.md, "Platforms", says where each platform puts them, what is backed up and what
/// happens before a device's first unlock.
public enum StorageLocation: Sendable, Hashable {
    /// The platform's place for data the app keeps (the default): Application Support on iOS,
    /// watchOS, visionOS and in sandboxed Mac apps (`…/Application Support/Vane/<project>/<environment>`);
    /// in Mac apps and tools outside the sandbox `…/Application Support/Vane/<bundle id>/<project>/<environment>`,
    /// so two apps, or a Debug and a Release build, never share files; on tvOS, which does not
    /// keep Application Support, the Caches directory with the installation id also in
    /// `UserDefaults`; elsewhere `$XDG_DATA_HOME/vane/<project>/<environment>` (by default
    /// `~/.local/share/vane/…`).
    case applicationSupport
    /// The shared container of an App Group (`group.com.example.shop`), so an app and its
    /// extensions (widgets, intents) are one installation: one installation id, one percent
    /// bucket, one experiment unit. Each process keeps its own cache, overrides and event queue
    /// in a folder named after its bundle identifier, beside the shared installation id.
    ///
    /// The app and each extension need the App Groups entitlement with this group; without it
    /// the client logs an error and uses ``applicationSupport``.
    case appGroup(String)
    /// Files directly in this directory (created if missing). Give each client its own. Backup
    /// and file protection are the app's choice here: the SDK changes no attribute of it.
    case directory(URL)
    /// Nothing on disk: every launch starts from the bundled defaults (previews, tests).
    case inMemory

    /// A project or environment id, or a bundle identifier, as a single path component.
    static func safeName(_ name: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
        let cleaned = String(name.map { allowed.contains($0) ? $0 : "_" })
        return cleaned.isEmpty || cleaned == "." || cleaned == ".." ? "_" : cleaned
    }
}
