/// The Server-Sent Event `…/stream` sends when a version is published:
///
/// ```
/// id: 12
/// event: version
/// data: {"templateVersion":"12"}
/// ```
///
/// A client that reconnects sends the newest version it holds as `Last-Event-ID`; the server
/// answers at once with its current version when that is newer.
public struct VersionEvent: Sendable, Hashable {
    /// The event's `event:` field.
    public static let type = "version"

    /// The announced template version.
    public var templateVersion: Int64

    /// Creates an event.
    public init(templateVersion: Int64) {
        self.templateVersion = templateVersion
    }

    /// Reads an event's `data` (`{"templateVersion": "N"}`), falling back to its `id` field.
    ///
    /// - Returns: nil when neither names a version above 0.
    public init?(data: String, lastEventId: String) {
        if case .object(let object)? = try? JSONValue.parse(Array(data.utf8)),
            let version = TemplateVersionNumber.read(object["templateVersion"]), version > 0
        {
            self.init(templateVersion: version)
        } else if let version = Int64(lastEventId), version > 0 {
            self.init(templateVersion: version)
        } else {
            return nil
        }
    }

    /// The event as the stream writes it, ending with its blank line.
    public var text: String {
        "id: \(templateVersion)\nevent: \(Self.type)\ndata: {\"templateVersion\":\"\(templateVersion)\"}\n\n"
    }
}
