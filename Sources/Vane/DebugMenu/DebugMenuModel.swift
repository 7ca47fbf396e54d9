#if canImport(Observation)
public import Observation

/// A debug menu that stays current: an `@Observable` model for a SwiftUI QA screen.
///
/// ```swift
/// struct FlagsScreen: View {
///     @State var model = DebugMenuModel(client: client)
///     var body: some View {
///         List(model.sections) { section in
///             Section(section.title) {
///                 ForEach(section.items) { item in
///                     Text("\(item.title): \(item.value ?? "–")")
///                 }
///             }
///         }
///         .toolbar { Button("Reset all") { model.removeAllOverrides() } }
///     }
/// }
/// ```
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
@Observable
public final class DebugMenuModel {
    /// The menu as of the last change.
    public private(set) var menu: DebugMenu
    /// The last value the menu refused, or nil.
    public private(set) var lastError: DebugMenuError?

    @ObservationIgnored private let client: VaneClient
    @ObservationIgnored private var watcher: Task<Void, Never>?

    /// Creates a model that refreshes on every change to the client's values.
    /// - Parameter client: The client whose keys the menu shows and whose overrides it sets.
    public init(client: VaneClient) {
        self.client = client
        self.menu = client.debugMenu()
        let updates = client.updates
        watcher = Task { [weak self] in
            for await _ in updates {
                guard let self else { return }
                self.refresh()
            }
        }
    }

    /// The sections.
    public var sections: [DebugMenu.Section] { menu.sections }

    /// Overrides a key; a value that does not fit is refused and kept in ``lastError``.
    ///
    /// ```swift
    /// Toggle(item.title, isOn: Binding(
    ///     get: { CoercedValue(item.value ?? "false").boolValue ?? false },
    ///     set: { model.set($0 ? "true" : "false", forKey: item.key) }))
    /// ```
    ///
    /// - Parameters:
    ///   - value: The value as text: a Boolean, a number or JSON as the key's kind requires, one of
    ///     its allowed values when it has them.
    ///   - key: The key's name.
    /// - Returns: Whether the override was set.
    @discardableResult
    public func set(_ value: String, forKey key: String) -> Bool {
        do {
            try client.setOverrideChecked(value, forKey: key)
            lastError = nil
            refresh()
            return true
        } catch {
            lastError = error
            return false
        }
    }

    /// Removes a key's override.
    /// - Parameter key: The key's name.
    public func removeOverride(forKey key: String) {
        client.removeOverride(forKey: key)
        refresh()
    }

    /// Removes every override.
    public func removeAllOverrides() {
        client.removeAllOverrides()
        refresh()
    }

    /// Rebuilds the menu from the client.
    public func refresh() {
        menu = client.debugMenu()
    }

    /// Stops following the client's changes.
    public func stop() {
        watcher?.cancel()
        watcher = nil
    }

    // The watching task holds no reference to the model, but waits for the client's next change:
    // without this it (and its subscription) would outlive the model until that change came.
    deinit {
        watcher?.cancel()
    }
}

/// The client's values as an `@Observable` snapshot: views that read it redraw when values change.
///
/// ```swift
/// @State var config = ObservableConfig(client: client)
/// var body: some View { if config.snapshot[.newCheckout] { NewCheckout() } else { OldCheckout() } }
/// ```
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
@Observable
public final class ObservableConfig {
    /// The values as of the last change.
    public private(set) var snapshot: RemoteConfigSnapshot
    /// The last change.
    public private(set) var lastUpdate: ConfigUpdate?

    @ObservationIgnored private var watcher: Task<Void, Never>?

    /// Creates a snapshot that follows the client's changes.
    /// - Parameter client: The client whose values the snapshot holds.
    public init(client: VaneClient) {
        self.snapshot = client.snapshot()
        let updates = client.updates
        watcher = Task { [weak self, client] in
            for await update in updates {
                guard let self else { return }
                self.snapshot = client.snapshot()
                self.lastUpdate = update
            }
        }
    }

    /// Stops following the client's changes.
    public func stop() {
        watcher?.cancel()
        watcher = nil
    }

    // The watching task holds no reference to the model, but waits for the client's next change:
    // without this it (and its subscription) would outlive the model until that change came.
    deinit {
        watcher?.cancel()
    }
}
#endif
