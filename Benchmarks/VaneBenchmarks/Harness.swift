import Foundation

/// A tiny benchmark harness: runs a body in rounds, reports the median time per operation.
///
/// Medians of several rounds resist a noisy neighbour better than a mean; every figure is printed
/// beside a baseline measured in the same run, so ratios stay meaningful when the machine is busy.
struct Harness {
    struct Measurement {
        let name: String
        let nanosecondsPerOperation: Double
    }

    var rounds = 15
    var minimumRoundDuration: Duration = .milliseconds(40)

    /// Measures `body`, which performs one operation per call.
    func measure(_ name: String, _ body: () -> Void) -> Measurement {
        // Find a batch size that makes one round last long enough to time reliably.
        var batch = 1
        let clock = ContinuousClock()
        while true {
            let elapsed = clock.measure { for _ in 0..<batch { body() } }
            if elapsed >= minimumRoundDuration || batch >= 1 << 30 { break }
            batch *= 2
        }
        var samples: [Double] = []
        for _ in 0..<rounds {
            let elapsed = clock.measure { for _ in 0..<batch { body() } }
            samples.append(elapsed.nanoseconds / Double(batch))
        }
        samples.sort()
        return Measurement(name: name, nanosecondsPerOperation: samples[samples.count / 2])
    }
}

extension Duration {
    var nanoseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }
}

/// Keeps the optimiser from deleting work whose result is unused.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// Formats nanoseconds with a readable unit.
func formatTime(_ nanoseconds: Double) -> String {
    switch nanoseconds {
    case ..<1_000: return String(format: "%.1f ns", nanoseconds)
    case ..<1_000_000: return String(format: "%.2f µs", nanoseconds / 1_000)
    default: return String(format: "%.2f ms", nanoseconds / 1_000_000)
    }
}
