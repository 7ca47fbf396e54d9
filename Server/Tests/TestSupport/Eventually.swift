import Foundation

/// Waits until `condition` holds, checking every 20 ms; false when `seconds` pass first.
package func eventually(within seconds: TimeInterval, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
    return try await condition()
}
