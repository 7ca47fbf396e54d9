import Synchronization

/// The last state of each experiment this process read or wrote, with the texts it is stored as.
///
/// Every group of events reads its experiment's sums and readings (JSON texts) and writes them
/// back, and on one node the texts it reads are almost always the ones it wrote a moment before.
/// Decoding them with Foundation's `JSONDecoder` took 4 % of SQLite's thread at 8 connections;
/// comparing them with the texts kept here costs a comparison of bytes. The texts decide, not the
/// experiment: a text another node wrote, a write whose transaction rolled back, or a row changed
/// in the database is simply not found, and is decoded.
final class DecodedStateCache: Sendable {
    private struct Key: Hashable {
        var environment: EnvironmentKey
        var experiment: String
    }

    private struct Entry {
        var tally: String
        var history: String?
        var stored: ExperimentTallyStore.Stored
    }

    /// Experiments kept at most (one entry each); an experiment that has not counted for a while
    /// makes room for one that counts.
    static let capacity = 256

    private let entries = Mutex<[Key: Entry]>([:])

    /// Experiments kept now.
    var count: Int { entries.withLock { $0.count } }

    /// The state stored as these texts, when it is the one kept for the experiment.
    func stored(
        _ environment: EnvironmentKey,
        experiment: String,
        tally: String,
        history: String?
    ) -> ExperimentTallyStore.Stored? {
        entries.withLock { entries in
            guard let entry = entries[Key(environment: environment, experiment: experiment)],
                entry.tally == tally, entry.history == history
            else { return nil }
            return entry.stored
        }
    }

    /// Keeps `stored` as the state that `tally` and `history` read as.
    func remember(
        _ stored: ExperimentTallyStore.Stored,
        of environment: EnvironmentKey,
        experiment: String,
        tally: String,
        history: String?
    ) {
        let key = Key(environment: environment, experiment: experiment)
        entries.withLock { entries in
            if entries[key] == nil, entries.count >= Self.capacity, let any = entries.keys.first {
                entries.removeValue(forKey: any)
            }
            entries[key] = Entry(tally: tally, history: history, stored: stored)
        }
    }
}
