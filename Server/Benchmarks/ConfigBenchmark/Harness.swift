import Foundation

/// A tiny benchmark harness (the one in Benchmarks/VaneBenchmarks; executables cannot share a file): runs a body in rounds, reports the median time per operation.
///
/// Medians of several rounds resist a noisy neighbour better than a mean; every figure is printed
/// beside a baseline measured in the same run, so ratios stay meaningful when the machine is busy.
struct Harness {
    struct Measurement {
        let name: String
        let nanosecondsPerOperation: Double
    }

    var rounds = 15
    /// How long one timed round lasts at least, in nanoseconds.
    var minimumRoundNanoseconds: UInt64 = 40_000_000

    /// Measures `body`, which performs one operation per call.
    func measure(_ name: String, _ body: () -> Void) -> Measurement {
        withoutActuallyEscaping(body) { measureSideBySide([(name, $0)])[0] }
    }

    /// Measures several bodies in alternating rounds, so that a slower or busier stretch of time
    /// affects each of them alike and their ratios stay honest.
    func measureSideBySide(_ bodies: [(name: String, body: () -> Void)]) -> [Measurement] {
        // Per body, a batch size that makes one round last long enough to time reliably.
        let batches = bodies.map { entry in
            var batch = 1
            while true {
                let elapsed = Self.time { for _ in 0..<batch { entry.body() } }
                if elapsed >= minimumRoundNanoseconds || batch >= 1 << 30 { return batch }
                batch *= 2
            }
        }
        var samples = [[Double]](repeating: [], count: bodies.count)
        for _ in 0..<rounds {
            for (index, entry) in bodies.enumerated() {
                let batch = batches[index]
                let elapsed = Self.time { for _ in 0..<batch { entry.body() } }
                samples[index].append(Double(elapsed) / Double(batch))
            }
        }
        return bodies.indices.map { index in
            let sorted = samples[index].sorted()
            return Measurement(name: bodies[index].name, nanosecondsPerOperation: sorted[sorted.count / 2])
        }
    }
}

extension Harness {
    /// Nanoseconds a block takes, on the monotonic clock (available on every platform VaneCore supports).
    static func time(_ block: () -> Void) -> UInt64 {
        let start = DispatchTime.now().uptimeNanoseconds
        block()
        return DispatchTime.now().uptimeNanoseconds - start
    }
}

/// Keeps the optimiser from deleting work whose result is unused.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// Formats nanoseconds with a readable unit.
/// Formats nanoseconds with a readable unit.
func formatTime(_ nanoseconds: Double) -> String {
    switch nanoseconds {
    case ..<1_000: return String(format: "%.1f ns", nanoseconds)
    case ..<1_000_000: return String(format: "%.2f µs", nanoseconds / 1_000)
    default: return String(format: "%.2f ms", nanoseconds / 1_000_000)
    }
}
