import Foundation

/// Who published a template version, when, how and why.
///
/// Everything but ``description`` is set by the server on publish.
public struct TemplateVersion: Sendable, Hashable {
    /// The version number, an int64 written as a string (`"42"`); increases on every publish.
    public var versionNumber: String?
    /// When it was published, RFC 3339 text as written (`2020-05-14T18:39:38.994Z`).
    public var updateTime: String?
    /// Who published it.
    public var updateUser: TemplateUser?
    /// Why it was published; at most 1,024 characters.
    public var description: String?
    /// Where the publish came from (`CONSOLE`, `REST_API`, …).
    public var updateOrigin: UpdateOrigin?
    /// How it was published (`INCREMENTAL_UPDATE`, `FORCED_UPDATE`, `ROLLBACK`).
    public var updateType: UpdateType?
    /// For a rollback, the version number rolled back to.
    public var rollbackSource: String?
    /// Whether it predates version history (Firebase only).
    public var isLegacy: Bool?
    /// Fields Vane does not know, kept for writing back.
    public var unknownFields: JSONObject

    /// Creates version metadata.
    public init(
        versionNumber: String? = nil,
        updateTime: String? = nil,
        updateUser: TemplateUser? = nil,
        description: String? = nil,
        updateOrigin: UpdateOrigin? = nil,
        updateType: UpdateType? = nil,
        rollbackSource: String? = nil,
        isLegacy: Bool? = nil,
        unknownFields: JSONObject = JSONObject()
    ) {
        self.versionNumber = versionNumber
        self.updateTime = updateTime
        self.updateUser = updateUser
        self.description = description
        self.updateOrigin = updateOrigin
        self.updateType = updateType
        self.rollbackSource = rollbackSource
        self.isLegacy = isLegacy
        self.unknownFields = unknownFields
    }

    /// The version number as an integer.
    public var number: Int64? { versionNumber.flatMap { Int64($0) } }
}

/// The publisher of a template version.
public struct TemplateUser: Sendable, Hashable {
    /// Their e-mail address.
    public var email: String?
    /// Their display name.
    public var name: String?
    /// A picture of them.
    public var imageUrl: String?
    /// Fields Vane does not know, kept for writing back.
    public var unknownFields: JSONObject

    /// Creates a user.
    public init(
        email: String? = nil,
        name: String? = nil,
        imageUrl: String? = nil,
        unknownFields: JSONObject = JSONObject()
    ) {
        self.email = email
        self.name = name
        self.imageUrl = imageUrl
        self.unknownFields = unknownFields
    }
}

/// Where a publish came from. Unknown values (Firebase adds new ones) are kept as written.
public struct UpdateOrigin: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The value as written.
    public var rawValue: String
    /// Creates an origin from its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Not specified.
    public static let unspecified = UpdateOrigin(rawValue: "REMOTE_CONFIG_UPDATE_ORIGIN_UNSPECIFIED")
    /// The Firebase console.
    public static let console = UpdateOrigin(rawValue: "CONSOLE")
    /// The REST API (Vane's admin API and CLI).
    public static let restAPI = UpdateOrigin(rawValue: "REST_API")
    /// The Node Admin SDK.
    public static let adminSDKNode = UpdateOrigin(rawValue: "ADMIN_SDK_NODE")

    /// The value as written.
    public var description: String { rawValue }
}

/// How a version was published. Unknown values are kept as written.
public struct UpdateType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The value as written.
    public var rawValue: String
    /// Creates a type from its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Not specified.
    public static let unspecified = UpdateType(rawValue: "REMOTE_CONFIG_UPDATE_TYPE_UNSPECIFIED")
    /// A publish whose `If-Match` matched the current version.
    public static let incrementalUpdate = UpdateType(rawValue: "INCREMENTAL_UPDATE")
    /// A publish with `If-Match: *`.
    public static let forcedUpdate = UpdateType(rawValue: "FORCED_UPDATE")
    /// A copy of an earlier version published anew.
    public static let rollback = UpdateType(rawValue: "ROLLBACK")

    /// The value as written.
    public var description: String { rawValue }
}
