// The server SDK: compiled only with the `ServerSDK` trait, which brings its dependencies.
#if ServerSDK
public import Configuration
import Foundation
import Vane
import VaneCore
public import VaneService

/// Vane as a swift-configuration provider: `config.bool(forKey: "checkout.new-flow", default: false)`
/// answered by Vane, evaluated in process for the lookup's context, updated live.
///
/// ```swift
/// let vane = VaneService(configuration: …)                       // run it in your ServiceGroup
/// let config = ConfigReader(providers: [
///     VaneConfigProvider(service: vane),                         // first: Vane wins
///     EnvironmentVariablesProvider(),                            // then the environment
/// ])
/// let newFlow = config.bool(
///     forKey: ConfigKey("checkout.new-flow",                      // Vane key checkout_new_flow
///                       context: ["randomizationId": .string(userID), "plan": "pro"]),
///     default: false)
/// ```
///
/// Keys map by ``Options/keyMapping`` (snake_case by default), the lookup's context by
/// ``Options/contextMapping``, values by Vane's coercion rule (see the SERVER-SDK guide). A key the
/// template does not have, or leaves to the app's default, is absent here, so the next provider
/// answers. ``snapshot()``, ``watchSnapshot(updatesHandler:)`` and
/// ``watchValue(forKey:type:updatesHandler:)`` see a new template as soon as the service has
/// downloaded it (within about a second of a publish while the event stream is connected).
@available(VaneServerSDK, *)
public struct VaneConfigProvider: ConfigProvider, Sendable {
    /// The service whose template the provider reads.
    public let service: VaneService
    /// How keys, contexts and secrets map.
    public let options: Options

    /// Creates a provider over a service (which must run in a `ServiceGroup` to stay current).
    ///
    /// ```swift
    /// let config = ConfigReader(providers: [
    ///     VaneConfigProvider(service: vane),       // Vane first: it wins
    ///     EnvironmentVariablesProvider(),
    /// ])
    /// ```
    ///
    /// - Parameters:
    ///   - service: The service whose template the provider reads.
    ///   - options: How keys, contexts and secrets map.
    public init(service: VaneService, options: Options = Options()) {
        self.service = service
        self.options = options
    }

    /// The provider's name in swift-configuration's logs.
    public var providerName: String { options.name }

    /// The value in the template in use.
    /// - Parameters:
    ///   - key: The swift-configuration key, with the lookup's context.
    ///   - type: The type the lookup asks for.
    /// - Returns: The value with its Vane key as `encodedKey`; no value when the template has
    ///   none for the key or leaves it to the app's default.
    /// - Throws: ``VaneValueTypeError`` when the value does not read as `type`.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try currentSnapshot().value(forKey: key, type: type)
    }

    /// The value in the template in use: Vane evaluates in process, so this does not wait.
    /// - Parameters:
    ///   - key: The swift-configuration key, with the lookup's context.
    ///   - type: The type the lookup asks for.
    /// - Returns: The same as ``value(forKey:type:)``.
    /// - Throws: ``VaneValueTypeError`` when the value does not read as `type`.
    public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try value(forKey: key, type: type)
    }

    /// The value now, then each time a new template changes it.
    /// - Parameters:
    ///   - key: The swift-configuration key, with the lookup's context.
    ///   - type: The type the lookup asks for.
    ///   - updatesHandler: Reads the lookups: the current one first, then one for each new
    ///     template that changes the result (a ``VaneValueTypeError`` as a failure).
    /// - Returns: What `updatesHandler` returns.
    /// - Throws: What `updatesHandler` throws.
    public func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler:
            nonisolated(nonsending) (
                _ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>
            ) async throws -> Return
    ) async throws -> Return {
        let templates = service.client.templateUpdates  // subscribed before the current one is read
        let first = currentSnapshot()
        let (stream, continuation) = AsyncStream<Result<LookupResult, any Error>>.makeStream(
            bufferingPolicy: .bufferingNewest(1)
        )
        let lookup: @Sendable (VaneConfigSnapshot) -> Result<LookupResult, any Error> = { snapshot in
            Result { try snapshot.value(forKey: key, type: type) }
        }
        let initial = lookup(first)
        continuation.yield(initial)
        let forwarding = Task { [service, options] in
            var last = Self.comparable(initial)
            for await template in templates {
                let result = lookup(VaneConfigSnapshot(template: template, service: service, options: options))
                let next = Self.comparable(result)
                guard next != last else { continue }
                last = next
                continuation.yield(result)
            }
            continuation.finish()
        }
        defer {
            forwarding.cancel()
            continuation.finish()
        }
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream))
    }

    /// A snapshot of the template in use.
    /// - Returns: A ``VaneConfigSnapshot``: every lookup in it reads the same template version.
    public func snapshot() -> any ConfigSnapshot { currentSnapshot() }

    /// The snapshot now, then one for each new template.
    /// - Parameter updatesHandler: Reads the snapshots: the current one first, then one for each
    ///   template the service downloads.
    /// - Returns: What `updatesHandler` returns.
    /// - Throws: What `updatesHandler` throws.
    public func watchSnapshot<Return: ~Copyable>(
        updatesHandler:
            nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>)
            async throws -> Return
    ) async throws -> Return {
        let templates = service.client.templateUpdates  // subscribed before the current one is read
        let (stream, continuation) = AsyncStream<any ConfigSnapshot>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.yield(currentSnapshot())
        let forwarding = Task { [service, options] in
            for await template in templates {
                continuation.yield(VaneConfigSnapshot(template: template, service: service, options: options))
            }
            continuation.finish()
        }
        defer {
            forwarding.cancel()
            continuation.finish()
        }
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream))
    }

    private func currentSnapshot() -> VaneConfigSnapshot {
        VaneConfigSnapshot(template: service.client.template, service: service, options: options)
    }

    /// A lookup's outcome in a form that compares: the result, or the error's text.
    private enum Outcome: Equatable {
        case found(LookupResult)
        case failed(String)
    }

    private static func comparable(_ result: Result<LookupResult, any Error>) -> Outcome {
        switch result {
        case .success(let lookup): return .found(lookup)
        case .failure(let error): return .failed("\(error)")
        }
    }
}
#endif
