import Foundation
import VaneCore

/// Every value as it resolved at one moment, unchanged by later activations or overrides.
///
/// Take one with ``VaneClient/snapshot()`` to read several keys that must agree with each other
/// (a layout and the flag that enables it).
public struct RemoteConfigSnapshot: RemoteConfigReader {
    let values: ResolvedValues
    let reporter: VaneClient?
    /// The exposures of experiment keys not read yet when the snapshot was taken: a read of one
    /// records it through the client (once, however many snapshots read it).
    let exposures: [String: Exposure]

    init(values: ResolvedValues, reporter: VaneClient?, exposures: [String: Exposure] = [:]) {
        self.values = values
        self.reporter = reporter
        self.exposures = exposures
    }

    /// A snapshot of fixed values (for previews), all with source `.remote`.
    ///
    /// ```swift
    /// #Preview { CheckoutView(config: RemoteConfigSnapshot(["max_items": "5"])) }
    /// ```
    ///
    /// - Parameter values: Each key's value as text, as the server sends it.
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
    /// - Parameter key: The key's name on the server.
    /// - Returns: The value as it resolved when the snapshot was taken; nil when no source had it.
    public func value(forKey key: String) -> ResolvedValue? {
        if !exposures.isEmpty, var exposure = exposures[key], let reporter {
            exposure.time = reporter.configuration.clock.now()
            reporter.recordExposure(exposure)
        }
        return values[key]
    }

    /// Passes the report to the client the snapshot came from.
    /// - Parameter mismatch: The key, the type asked for, the value found and its source.
    public func reportTypeMismatch(_ mismatch: TypeMismatch) { reporter?.reportTypeMismatch(mismatch) }

    /// Every key with a value, sorted.
    public var keys: [String] { values.keys.sorted() }
}
