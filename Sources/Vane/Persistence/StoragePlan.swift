import Foundation

/// Where one client's files go and how they are kept, decided from a ``StorageLocation`` and the
/// ``StoragePlatform``'s facts. Plain logic: the tests decide plans for every platform on Linux.
struct StoragePlan: Sendable, Hashable {
    /// The cache, the overrides and the event queue.
    var directory: URL
    /// The installation id: in ``directory``, except under an App Group, where the app and its
    /// extensions share it.
    var installationIdFile: URL
    /// The folder whose attributes the SDK sets (`…/Vane`), or nil for a directory the app chose.
    var root: URL?
    /// Whether ``root`` is excluded from backups, so a backup restored onto a second device does
    /// not clone the installation id. Set on the folder: an atomic replace makes a new file,
    /// which would lose a per-file attribute.
    var excludedFromBackup: Bool
    /// Whether the folders get the protection class `completeUntilFirstUserAuthentication`
    /// (files made in them inherit it): readable from the first unlock after a restart on.
    var protectedUntilFirstUnlock: Bool
    /// Whether other processes (the app's extensions) write beside this one: in an App Group.
    var isShared: Bool
    /// Where the installation id is kept a second time, in `UserDefaults`: tvOS may purge every
    /// file of an app's storage, but keeps its defaults.
    var installationIdDefaults: DefaultsSlot?

    /// A `UserDefaults` value: the suite (nil for the standard one) and the key.
    struct DefaultsSlot: Sendable, Hashable {
        var suiteName: String?
        var key: String
    }

    /// The plan for `location`, or nil for ``StorageLocation/inMemory``.
    /// - Throws: ``StoragePlanError`` when an App Group has no container.
    static func make(
        _ location: StorageLocation,
        project: String,
        environment: String,
        platform facts: StoragePlatform
    ) throws(StoragePlanError) -> StoragePlan? {
        let os = facts.platform
        let path = [StorageLocation.safeName(project), StorageLocation.safeName(environment)]
        let defaultsKey = "vane.installation-id." + path.joined(separator: ".")
        // tvOS keeps neither Application Support nor Caches for sure; Caches is where it lets an
        // app write at all. https://developer.apple.com/library/archive/documentation/General/Conceptual/AppleTV_PG/index.html
        let purgeable = os == .tvOS
        // Devices that restore a backup onto another device: iPhone, iPad, Apple Watch, Vision Pro.
        let backedUpToOtherDevices = os == .iOS || os == .watchOS || os == .visionOS
        let dataProtection = os == .iOS || os == .watchOS || os == .visionOS || os == .tvOS
        switch location {
        case .inMemory:
            return nil
        case .directory(let url):
            return StoragePlan(
                directory: url,
                installationIdFile: url.appendingPathComponent("installation-id", isDirectory: false),
                root: nil,
                excludedFromBackup: false,
                protectedUntilFirstUnlock: false,
                isShared: false,
                // Not by the folder's path: the app container's path changes with app updates.
                installationIdDefaults: purgeable ? DefaultsSlot(suiteName: nil, key: defaultsKey) : nil
            )
        case .applicationSupport:
            let root: URL
            switch os {
            case .linux, .other:
                root = facts.dataHome.appendingPathComponent("vane")
            case .tvOS:
                root = (facts.caches ?? FileManager.default.temporaryDirectory).appendingPathComponent("Vane")
            case .macOS, .macCatalyst:
                let support = (facts.applicationSupport ?? FileManager.default.temporaryDirectory)
                    .appendingPathComponent("Vane")
                // Outside the sandbox every app and tool of the user shares Application Support.
                root =
                    facts.isSandboxed
                    ? support
                    : support.appendingPathComponent(
                        StorageLocation.safeName(facts.bundleIdentifier ?? facts.processName)
                    )
            case .iOS, .watchOS, .visionOS:
                root = (facts.applicationSupport ?? FileManager.default.temporaryDirectory)
                    .appendingPathComponent("Vane")
            }
            let directory = root.appendingPathComponent(path[0]).appendingPathComponent(path[1])
            let isApple = os != .linux && os != .other
            return StoragePlan(
                directory: directory,
                installationIdFile: directory.appendingPathComponent("installation-id", isDirectory: false),
                root: isApple ? root : nil,
                excludedFromBackup: backedUpToOtherDevices,
                protectedUntilFirstUnlock: dataProtection,
                isShared: false,
                installationIdDefaults: purgeable ? DefaultsSlot(suiteName: nil, key: defaultsKey) : nil
            )
        case .appGroup(let identifier):
            guard let container = facts.appGroupContainer(identifier) else {
                throw StoragePlanError(appGroup: identifier)
            }
            let library = container.appendingPathComponent("Library")
            let root = library.appendingPathComponent(purgeable ? "Caches" : "Application Support")
                .appendingPathComponent("Vane")
            let shared = root.appendingPathComponent(path[0]).appendingPathComponent(path[1])
            return StoragePlan(
                directory: shared.appendingPathComponent(
                    StorageLocation.safeName(facts.bundleIdentifier ?? facts.processName)
                ),
                installationIdFile: shared.appendingPathComponent("installation-id", isDirectory: false),
                root: root,
                excludedFromBackup: backedUpToOtherDevices,
                protectedUntilFirstUnlock: dataProtection,
                isShared: true,
                installationIdDefaults: purgeable ? DefaultsSlot(suiteName: identifier, key: defaultsKey) : nil
            )
        }
    }
}

/// An App Group the app cannot use: its entitlement does not list the group.
struct StoragePlanError: Error, Sendable, Hashable, CustomStringConvertible {
    var appGroup: String

    var description: String {
        """
        the App Group \(appGroup) has no container: add it to the App Groups entitlement of the app \
        and of each extension; until then the client keeps its files in the app's own Application Support
        """
    }
}
