public import Foundation

/// Where a client keeps its files: the config cache, local overrides and the installation id.
public enum StorageLocation: Sendable, Hashable {
    /// Application Support on Apple platforms (`…/Application Support/Vane/<project>/<environment>`);
    /// elsewhere `$XDG_DATA_HOME/vane/<project>/<environment>` (by default `~/.local/share/vane/…`).
    case applicationSupport
    /// Files directly in this directory (created if missing). Give each client its own.
    case directory(URL)
    /// Nothing on disk: every launch starts from the bundled defaults (previews, tests).
    case inMemory

    /// The directory for a project and environment, or nil for ``inMemory``.
    func directory(project: String, environment: String) -> URL? {
        switch self {
        case .inMemory:
            return nil
        case .directory(let url):
            return url
        case .applicationSupport:
            #if canImport(Darwin)
            let base =
                FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? FileManager.default.temporaryDirectory
            let root = base.appendingPathComponent("Vane")
            #else
            let environmentVariables = ProcessInfo.processInfo.environment
            let root: URL
            if let dataHome = environmentVariables["XDG_DATA_HOME"], !dataHome.isEmpty {
                root = URL(fileURLWithPath: dataHome).appendingPathComponent("vane")
            } else {
                root = FileManager.default.homeDirectoryForCurrentUser
                    .appendingPathComponent(".local/share/vane")
            }
            #endif
            return root.appendingPathComponent(Self.safeName(project)).appendingPathComponent(
                Self.safeName(environment)
            )
        }
    }

    /// A project or environment id as a single path component.
    static func safeName(_ name: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
        let cleaned = String(name.map { allowed.contains($0) ? $0 : "_" })
        return cleaned.isEmpty || cleaned == "." || cleaned == ".." ? "_" : cleaned
    }
}
