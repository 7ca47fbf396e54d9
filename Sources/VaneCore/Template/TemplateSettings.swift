/// What clients of an environment may decide and learn: the template's top-level `vane` object.
///
/// ```json
/// "vane": {"clientsMayPinDateTime": true, "clientsReceiveDescriptions": true}
/// ```
///
/// Both default to `false`, the safe choice for an app that ships its client key to everyone:
/// - `clientsMayPinDateTime`: whether a fetch or OFREP context may set `dateTime` and so be
///   evaluated at another moment. Off, the server evaluates `dateTime` rules at its own clock, so
///   nobody can read values held back for a launch by claiming it is next year. Turn it on in a
///   QA environment to test a launch ahead of time.
/// - `clientsReceiveDescriptions`: whether fetch metadata carries each parameter's
///   `description` (a debug menu shows it). Off, clients get only the title, category, allowed
///   values and realtime marker.
///
/// The setting lives in the template, so it is versioned, audited and rolled back with it, and
/// every node serves the same setting as the same version.
public struct TemplateSettings: Sendable, Hashable {
    /// Whether a client's context may pin `dateTime`.
    public var clientsMayPinDateTime: Bool
    /// Whether fetch metadata carries parameter descriptions.
    public var clientsReceiveDescriptions: Bool
    /// Members of the `vane` object Vane does not know, kept for writing back.
    public var unknownFields: JSONObject

    /// Creates settings; the defaults are the safe ones.
    public init(
        clientsMayPinDateTime: Bool = false,
        clientsReceiveDescriptions: Bool = false,
        unknownFields: JSONObject = JSONObject()
    ) {
        self.clientsMayPinDateTime = clientsMayPinDateTime
        self.clientsReceiveDescriptions = clientsReceiveDescriptions
        self.unknownFields = unknownFields
    }

    /// Whether every setting has its default (then the template has no `vane` object).
    public var isDefault: Bool { self == TemplateSettings() }

    /// Reads the `vane` object at `path`, recording wrong types in `reader`.
    static func read(_ object: JSONObject, at path: JSONPath, reader: inout JSONFieldReader) -> TemplateSettings {
        TemplateSettings(
            clientsMayPinDateTime: reader.bool(
                object["clientsMayPinDateTime"],
                at: path.appending("clientsMayPinDateTime")
            ) ?? false,
            clientsReceiveDescriptions: reader.bool(
                object["clientsReceiveDescriptions"],
                at: path.appending("clientsReceiveDescriptions")
            ) ?? false,
            unknownFields: reader.unknownMembers(
                of: object,
                known: ["clientsMayPinDateTime", "clientsReceiveDescriptions"]
            )
        )
    }
}
