import Foundation

/// A tiny benchmark harness, shared by the benchmark executables: runs a body in rounds, reports
/// the median time per operation.
///
/// Medians of several rounds resist a noisy neighbour better than a mean; every figure is printed
/// beside a baseline measured in the same run, so ratios stay meaningful when the machine is busy.
package struct Harness {
    /// One body's median time per operation.
    package struct Measurement {
        package let name: String
        package let nanosecondsPerOperation: Double
    }

    /// How many timed rounds each body gets.
    package var rounds: Int
    /// How long one timed round lasts at least, in nanoseconds.
    package var minimumRoundNanoseconds: UInt64

    /// A harness: 15 rounds of at least 40 ms by default.
    package init(rounds: Int = 15, minimumRoundNanoseconds: UInt64 = 40_000_000) {
        self.rounds = rounds
        self.minimumRoundNanoseconds = minimumRoundNanoseconds
    }

    /// Measures `body`, which performs one operation per call.
    package func measure(_ name: String, _ body: () -> Void) -> Measurement {
        withoutActuallyEscaping(body) { measureSideBySide([(name, $0)])[0] }
    }

    /// Measures several bodies in alternating rounds, so that a slower or busier stretch of time
    /// affects each of them alike and their ratios stay honest.
    package func measureSideBySide(_ bodies: [(name: String, body: () -> Void)]) -> [Measurement] {
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
    package static func time(_ block: () -> Void) -> UInt64 {
        let start = DispatchTime.now().uptimeNanoseconds
        block()
        return DispatchTime.now().uptimeNanoseconds - start
    }
}

/// Keeps the optimiser from deleting work whose result is unused.
@inline(never)
package func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// Formats nanoseconds with a readable unit.
package func formatTime(_ nanoseconds: Double) -> String {
    switch nanoseconds {
    case ..<1_000: return String(format: "%.1f ns", nanoseconds)
    case ..<1_000_000: return String(format: "%.2f µs", nanoseconds / 1_000)
    default: return String(format: "%.2f ms", nanoseconds / 1_000_000)
    }
}
