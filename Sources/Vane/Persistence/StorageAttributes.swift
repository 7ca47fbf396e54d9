import Foundation

/// Sets what a ``StoragePlan`` asks of its folders on Apple platforms: exclusion from backup and
/// the data protection class. Elsewhere there is nothing to set.
enum StorageAttributes {
    /// Applies the plan's attributes to its folders (created already).
    /// - Throws: the file system's error; the caller logs it, the files still work.
    static func apply(_ plan: StoragePlan) throws {
        #if canImport(Darwin)
        if plan.protectedUntilFirstUnlock {
            // Files created in a folder inherit its class, so every later atomic replace keeps it.
            // completeUntilFirstUserAuthentication (iOS 4, macOS 11, tvOS 9, watchOS 2, visionOS 1):
            // readable after the first unlock since the restart, also while locked again.
            // https://developer.apple.com/documentation/foundation/fileprotectiontype/completeuntilfirstuserauthentication
            // https://developer.apple.com/documentation/uikit/protecting_the_user_s_privacy/encrypting_your_app_s_files
            let folders = Set([plan.directory, plan.installationIdFile.deletingLastPathComponent()])
            for folder in folders {
                try FileManager.default.setAttributes(
                    [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication],
                    ofItemAtPath: folder.path
                )
            }
        }
        if plan.excludedFromBackup, var root = plan.root {
            // On the folder, not the files: an atomic replace makes a new file without the
            // attribute. isExcludedFromBackup: iOS 5.1, macOS 10.8, tvOS 9, watchOS 2, visionOS 1.
            // https://developer.apple.com/documentation/foundation/urlresourcevalues/isexcludedfrombackup
            // https://developer.apple.com/documentation/foundation/optimizing_your_app_s_data_for_icloud_backup
            var values = URLResourceValues()
            values.isExcludedFromBackup = true
            try root.setResourceValues(values)
        }
        #endif
    }
}
