import Foundation
import VaneCore

/// Every value as it resolved at one moment, unchanged by later activations or overrides.
///
/// Take one with ``VaneClient/snapshot()`` to read several keys that must agree with each other
/// (a layout and the flag that enables it).
public struct RemoteConfigSnapshot: RemoteConfigReader {
    let values: ResolvedValues
    let reporter: (any RemoteConfigReader)?

    init(values: ResolvedValues, reporter: (any RemoteConfigReader)?) {
        self.values = values
        self.reporter = reporter
    }

    /// A snapshot of fixed values (for previews), all with source `.remote`.
    public init(_ values: [String: String]) {
        self.init(
            values: ResolvedValues(
                overrides: [:],
                active: FetchedConfig(entries: values, templateVersion: 0, fetchedAt: .distantPast),
                defaults: InAppDefaults()
            ),
            reporter: nil
        )
    }

    /// The value for a key and its source.
    public func value(forKey key: String) -> ResolvedValue? { values[key] }

    /// Passes the report to the client the snapshot came from.
    public func reportTypeMismatch(_ mismatch: TypeMismatch) { reporter?.reportTypeMismatch(mismatch) }

    /// Every key with a value, sorted.
    public var keys: [String] { values.values.keys.sorted() }
}
