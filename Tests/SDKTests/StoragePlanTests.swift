import Foundation
import Testing

@testable import Vane

/// Where each platform keeps a client's files and how (issue #34): decided from injected
/// platform facts, so every platform's rule runs here.
@Suite struct StoragePlanTests {
    static let home = URL(fileURLWithPath: "/Users/ana")
    static let group = URL(fileURLWithPath: "/Users/ana/Library/Group Containers/group.shop")

    static func facts(
        _ platform: RuntimePlatform,
        sandboxed: Bool = true,
        bundle: String? = "com.example.shop",
        groups: [String: URL] = ["group.shop": group]
    ) -> StoragePlatform {
        StoragePlatform(
            platform: platform,
            isSandboxed: sandboxed,
            bundleIdentifier: bundle,
            processName: "shop-tool",
            applicationSupport: home.appendingPathComponent("Library/Application Support"),
            caches: home.appendingPathComponent("Library/Caches"),
            dataHome: home.appendingPathComponent(".local/share"),
            appGroupContainer: { groups[$0] }
        )
    }

    static func plan(_ location: StorageLocation, _ facts: StoragePlatform) throws -> StoragePlan {
        try #require(try StoragePlan.make(location, project: "shop", environment: "prod", platform: facts))
    }

    @Test(arguments: [RuntimePlatform.iOS, .watchOS, .visionOS])
    func devicesThatRestoreBackupsElsewhereExcludeTheSDKFolderAndProtectIt(_ platform: RuntimePlatform) throws {
        let plan = try Self.plan(.applicationSupport, Self.facts(platform))
        #expect(plan.directory.path == "/Users/ana/Library/Application Support/Vane/shop/prod")
        #expect(plan.root?.path == "/Users/ana/Library/Application Support/Vane", "the folder, not single files")
        #expect(plan.excludedFromBackup)
        #expect(plan.protectedUntilFirstUnlock)
        #expect(plan.installationIdFile.path == plan.directory.appendingPathComponent("installation-id").path)
        #expect(plan.installationIdDefaults == nil)
    }

    @Test func tvOSKeepsFilesInCachesAndTheInstallationIdInUserDefaults() throws {
        let plan = try Self.plan(.applicationSupport, Self.facts(.tvOS))
        #expect(
            plan.directory.path == "/Users/ana/Library/Caches/Vane/shop/prod",
            "tvOS does not keep Application Support"
        )
        #expect(plan.installationIdDefaults == .init(suiteName: nil, key: "vane.installation-id.shop.prod"))
        #expect(!plan.excludedFromBackup, "Caches are not backed up")
        #expect(plan.protectedUntilFirstUnlock)
    }

    @Test(arguments: [RuntimePlatform.macOS, .macCatalyst])
    func macAppsOutsideTheSandboxEachGetTheirOwnFolder(_ platform: RuntimePlatform) throws {
        let release = try Self.plan(.applicationSupport, Self.facts(platform, sandboxed: false))
        let debug = try Self.plan(
            .applicationSupport,
            Self.facts(platform, sandboxed: false, bundle: "com.example.shop.debug")
        )
        let tool = try Self.plan(.applicationSupport, Self.facts(platform, sandboxed: false, bundle: nil))
        #expect(release.directory.path == "/Users/ana/Library/Application Support/Vane/com.example.shop/shop/prod")
        #expect(debug.directory.path == "/Users/ana/Library/Application Support/Vane/com.example.shop.debug/shop/prod")
        #expect(tool.directory.path == "/Users/ana/Library/Application Support/Vane/shop-tool/shop/prod")
        // Inside the sandbox Application Support is the app's container already.
        let sandboxed = try Self.plan(.applicationSupport, Self.facts(platform, sandboxed: true))
        #expect(sandboxed.directory.path == "/Users/ana/Library/Application Support/Vane/shop/prod")
        #expect(!release.excludedFromBackup && !release.protectedUntilFirstUnlock)
    }

    @Test func linuxKeepsTheXDGFolderWithoutAttributes() throws {
        let plan = try Self.plan(.applicationSupport, Self.facts(.linux))
        #expect(plan.directory.path == "/Users/ana/.local/share/vane/shop/prod")
        #expect(plan.root == nil && !plan.excludedFromBackup && !plan.protectedUntilFirstUnlock)
    }

    @Test func anAppGroupSharesTheInstallationIdAndKeepsEachProcessFilesApart() throws {
        let app = try Self.plan(.appGroup("group.shop"), Self.facts(.iOS))
        let widget = try Self.plan(.appGroup("group.shop"), Self.facts(.iOS, bundle: "com.example.shop.widget"))
        let shared = "/Users/ana/Library/Group Containers/group.shop/Library/Application Support/Vane/shop/prod"
        #expect(app.installationIdFile.path == shared + "/installation-id")
        #expect(widget.installationIdFile == app.installationIdFile)
        #expect(app.directory.path == shared + "/com.example.shop")
        #expect(widget.directory.path == shared + "/com.example.shop.widget")
        #expect(app.isShared && app.excludedFromBackup && app.protectedUntilFirstUnlock)

        let tv = try Self.plan(.appGroup("group.shop"), Self.facts(.tvOS))
        #expect(
            tv.installationIdFile.path.hasPrefix("/Users/ana/Library/Group Containers/group.shop/Library/Caches/Vane/")
        )
        #expect(tv.installationIdDefaults?.suiteName == "group.shop")
    }

    @Test func anAppGroupWithoutTheEntitlementIsAnErrorThatSaysWhatToAdd() throws {
        #expect(throws: StoragePlanError(appGroup: "group.other")) {
            try StoragePlan.make(
                .appGroup("group.other"),
                project: "shop",
                environment: "prod",
                platform: Self.facts(.iOS)
            )
        }
        #expect(StoragePlanError(appGroup: "group.other").description.contains("App Groups entitlement"))
    }

    @Test func aDirectoryTheAppChoseKeepsItsAttributes() throws {
        let url = URL(fileURLWithPath: "/tmp/mine")
        let plan = try Self.plan(.directory(url), Self.facts(.iOS))
        #expect(plan.directory == url && plan.root == nil)
        #expect(!plan.excludedFromBackup && !plan.protectedUntilFirstUnlock)
        #expect(
            try StoragePlan.make(.inMemory, project: "shop", environment: "prod", platform: Self.facts(.iOS)) == nil
        )
    }

    @Test func macCatalystIsMacOSToConditions() {
        #expect(RuntimePlatform.macCatalyst.deviceOS == "macos")
        #expect(RuntimePlatform.iOS.deviceOS == "ios")
        #expect(RuntimePlatform.current.deviceOS == ClientContext.currentOS)
    }
}
