import ArgumentParser
import VaneCore

/// `vane percentile`: the bucket a `percent` rule puts an id in.
struct PercentileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "percentile",
        abstract: "Print the micro-percentile (0 to 99,999,999) of a randomization id under a seed.",
        discussion: """
            `percent <= 20` holds for micro-percentiles up to 20,000,000. The value is Firebase's: \
            SHA-256 of "seed.id" (just "id" without a seed) modulo 100,000,000.
            """
    )

    @Option(name: .long, help: "The percent rule's seed; leave out for none.")
    var seed = ""

    @Option(name: .long, help: "The randomization id (the targeting key).")
    var id: String

    func validate() throws {
        if id.isEmpty { throw ValidationError("--id must not be empty: without an id, no percent rule holds") }
    }

    func run() async throws {
        print(PercentBucket.microPercentile(seed: seed, randomizationId: id))
    }
}
