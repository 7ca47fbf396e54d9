/// An environment of a project, as the HTTP API addresses it: `/v1/projects/{project}/environments/{environment}`.
///
/// The server routes these paths, the SDK and the `vane` tool build them; all three use this type,
/// so an id is percent-encoded the same way everywhere.
public struct EnvironmentAddress: Sendable, Hashable, CustomStringConvertible {
    /// The project id.
    public var project: String
    /// The environment id (`production`, `staging`, …).
    public var environment: String

    /// Creates an address.
    public init(project: String, environment: String) {
        self.project = project
        self.environment = environment
    }

    /// The route pattern the server registers, with the parameters ``projectParameter`` and
    /// ``environmentParameter``.
    public static let routePattern = "v1/projects/:project/environments/:environment"
    /// The name of the project parameter in ``routePattern``.
    public static let projectParameter = "project"
    /// The name of the environment parameter in ``routePattern``.
    public static let environmentParameter = "environment"

    /// The absolute path of the environment or of one of its resources, each id percent-encoded
    /// as one path segment: `/v1/projects/shop/environments/production/fetch`.
    public func path(_ resource: EnvironmentResource? = nil) -> String {
        var path = "/v1/projects/" + Self.pathSegment(project) + "/environments/" + Self.pathSegment(environment)
        if let resource { path += "/" + resource.rawValue }
        return path
    }

    /// `project/environment`, as messages name an environment.
    public var description: String { "\(project)/\(environment)" }

    /// Percent-encodes `text` as one path segment: everything but RFC 3986's unreserved characters
    /// and sub-delimiters (and `:`, `@`) becomes `%XX` of its UTF-8 bytes, `/` included.
    public static func pathSegment(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isAllowedInSegment(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func isAllowedInSegment(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~!$&'()*+,;=:@".utf8.contains(byte)
        }
    }
}

/// The resources under an environment's path.
public enum EnvironmentResource: String, Sendable, Hashable, CaseIterable {
    /// `template`: the published template (admin: read and publish).
    case template
    /// `template/compiled`: the template for local evaluation (server keys).
    case compiledTemplate = "template/compiled"
    /// `versions`: the version history.
    case versions
    /// `rollback`: publishes a copy of an old version.
    case rollback
    /// `diff`: what changed between two versions.
    case diff
    /// `defaults`: the template's default values as an in-app defaults file.
    case defaults
    /// `fetch`: one client's evaluated values.
    case fetch
    /// `stream`: the Server-Sent Events stream that announces new versions.
    case stream
    /// `audit`: the environment's audit log.
    case audit
    /// `experiments`: the environment's A/B tests (admin API).
    case experiments
    /// `events`: exposures and metric events apps send for experiments.
    case events
}
