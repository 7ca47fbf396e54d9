import Crypto
import Foundation
import Logging
import VaneCore

/// Exposures and tracked events waiting to be sent, kept in `events.json` in the client's
/// storage directory so a relaunch or a week offline loses none of them.
///
/// Bounded: when full, the oldest event is dropped and counted. Events leave the queue only when
/// the server answered for them (stored, already stored, or refused for good), so a batch cut
/// off by a crash or a timeout is sent again with the same ids and counted once.
final class EventQueue: Sendable {
    struct State: Sendable {
        /// The queue is `events[start...]`: dropping the oldest moves `start`, so a full queue
        /// costs no copying per event (the array is compacted now and then).
        var events: [QueuedEvent] = []
        var start = 0
        /// Events dropped because the queue was full, since the client's first launch.
        var dropped = 0
        /// Identities of recorded exposures (``Exposure/identity``), oldest first, so each is
        /// recorded once; bounded like the events.
        var exposed: [String] = []
        var exposedSet: Set<String> = []
        /// Whether the file is behind the state.
        var changed = false
        /// Whether the file is there but could not be read (before the device's first unlock):
        /// it is not written until ``EventQueue/retryLoad()`` has read it.
        var fileUnreadable = false
        /// Metric events made by this launch: with ``launchId``, their ids.
        var counter = 0
        /// Sending pauses after 429 and 5xx answers, as fetches do.
        var backoff = BackoffState()

        /// Gives back the space of events before `start` once they are most of the array, so a
        /// removal costs O(1) amortized.
        mutating func compact() {
            guard start >= 1_024, start * 2 >= events.count else { return }
            events.removeFirst(start)
            start = 0
        }
    }

    /// The file; nil keeps events in memory only (``StorageLocation/none`` or an unwritable
    /// directory).
    let file: URL?
    let capacity: Int
    let logger: Logger
    /// Random per launch: metric event ids are `{launchId}-{n}`, unique without a UUID per event.
    let launchId = UUID().uuidString.lowercased()
    private let state: LockedValue<State>
    private let persistLock = LockedValue<Void>()

    /// How many exposure identities are remembered.
    static let rememberedExposures = 10_000

    init(file: URL?, capacity: Int, logger: Logger) {
        self.file = file
        self.capacity = capacity
        self.logger = logger
        state = LockedValue(Self.load(file, capacity: capacity, logger: logger))
    }

    var count: Int { state.withLockedValue { $0.events.count - $0.start } }
    /// Whether the file could not be read yet and is waiting for ``retryLoad()``.
    var isWaitingForFile: Bool { state.withLockedValue { $0.fileUnreadable } }

    /// Reads a file that could not be read before and puts its events before those recorded
    /// since (the oldest are dropped beyond the capacity, as always), and its exposures among the
    /// remembered ones.
    func retryLoad() {
        guard isWaitingForFile else { return }
        let stored = Self.load(file, capacity: capacity, logger: logger)
        guard !stored.fileUnreadable else { return }
        state.withLockedValue { state in
            let recordedSince = Array(state.events[state.start...])
            let known = Set(recordedSince.map(\.id))
            let merged = stored.events.filter { !known.contains($0.id) } + recordedSince
            state.dropped += stored.dropped + max(0, merged.count - capacity)
            state.events = Array(merged.suffix(capacity))
            state.start = 0
            for identity in stored.exposed where state.exposedSet.insert(identity).inserted {
                state.exposed.insert(identity, at: 0)
            }
            state.fileUnreadable = false
            state.changed = true
        }
    }
    var dropped: Int { state.withLockedValue { $0.dropped } }

    /// The next metric event id.
    func nextId() -> String {
        let number = state.withLockedValue { state -> Int in
            state.counter += 1
            return state.counter
        }
        return launchId + "-" + String(number)
    }

    /// Queues an event, dropping the oldest when full.
    /// - Returns: How many events wait now.
    @discardableResult
    func append(_ event: QueuedEvent) -> Int {
        let (count, droppedNow) = state.withLockedValue { state -> (Int, Bool) in
            var droppedNow = false
            if state.events.count - state.start >= capacity {
                state.start += 1
                state.dropped += 1
                droppedNow = state.dropped == 1 || state.dropped % 1_000 == 0
                state.compact()
            }
            state.events.append(event)
            state.changed = true
            return (state.events.count - state.start, droppedNow)
        }
        if droppedNow {
            logger.warning(
                "the event queue is full (\(capacity) events): dropping the oldest (\(dropped) so far); the server has not been reachable for a while, or flush() is never called"
            )
        }
        return count
    }

    /// Remembers an exposure; false when it was recorded before.
    func markExposed(_ identity: String) -> Bool {
        state.withLockedValue { state in
            guard state.exposedSet.insert(identity).inserted else { return false }
            state.exposed.append(identity)
            if state.exposed.count > Self.rememberedExposures {
                let forgotten = state.exposed.count - Self.rememberedExposures
                for old in state.exposed.prefix(forgotten) { state.exposedSet.remove(old) }
                state.exposed.removeFirst(forgotten)
            }
            state.changed = true
            return true
        }
    }

    /// An exposure's event id: the same for the same exposure, so one recorded again after its
    /// identity was forgotten is a duplicate the server ignores.
    static func exposureId(_ identity: String) -> String {
        "x-"
            + SHA256.hash(data: Array(identity.utf8)).prefix(16).map { byte in
                let hex = String(byte, radix: 16)
                return hex.count == 1 ? "0" + hex : hex
            }.joined()
    }

    /// The oldest `limit` events, left in the queue until ``remove(_:)``.
    func oldest(_ limit: Int) -> [QueuedEvent] {
        state.withLockedValue { state in
            Array(state.events[state.start..<min(state.events.count, state.start + limit)])
        }
    }

    /// Removes the events the server answered for: a batch from ``oldest(_:)``, so still the
    /// queue's oldest (events only join at the end, and a full queue drops from the front).
    func remove(_ ids: Set<String>) {
        state.withLockedValue { state in
            while state.start < state.events.count, ids.contains(state.events[state.start].id) {
                state.start += 1
            }
            state.compact()
            state.changed = true
        }
    }

    /// Sending's backoff, read and changed under the queue's lock.
    func withBackoff<R, Failure: Error>(_ body: (inout BackoffState) throws(Failure) -> R) throws(Failure) -> R {
        try state.withLockedValue { state throws(Failure) in try body(&state.backoff) }
    }

    /// Writes the file when the queue changed since the last write. Under `persistLock`, each
    /// write takes the newest state, so writes that race end with the newest on disk.
    func save() {
        guard let file else { return }
        persistLock.withLock {
            // Only the arrays' references are taken under the lock (copy on write): encoding
            // thousands of events must not hold up `track` on another thread.
            guard
                let snapshot = state.withLockedValue({ state -> State? in
                    // An unreadable file keeps its events: writing would replace them with fewer.
                    guard state.changed, !state.fileUnreadable else { return nil }
                    state.changed = false
                    return state
                })
            else { return }
            let object: JSONObject = [
                "format": 1,
                "dropped": .number(JSONNumber(snapshot.dropped)),
                "exposed": .array(snapshot.exposed.map { .string($0) }),
                "events": .array(snapshot.events[snapshot.start...].map { .object($0.json()) }),
            ]
            do {
                try AtomicFile.write(JSONValue.object(object).serializedData(.compact), to: file)
            } catch {
                state.withLockedValue { $0.changed = true }
                logger.error("\(error); the events wait in memory and the next write tries again")
            }
        }
    }

    private static func load(_ file: URL?, capacity: Int, logger: Logger) -> State {
        var state = State()
        guard let file else { return state }
        let read: [UInt8]?
        do {
            read = try AtomicFile.read(file)
        } catch {
            logger.warning("cannot read the event queue yet: \(error); its events are kept and read again later")
            state.fileUnreadable = true
            return state
        }
        do {
            guard let bytes = read else { return state }
            guard case .object(let object) = try JSONValue.parse(bytes), object["format"] == 1 else {
                throw CacheFileError(path: "$", message: "not an event queue of format 1")
            }
            state.dropped = object["dropped"]?.numberValue?.intValue ?? 0
            state.exposed = (object["exposed"]?.arrayValue ?? []).compactMap(\.stringValue)
            state.exposedSet = Set(state.exposed)
            let items = object["events"]?.arrayValue ?? []
            state.events = items.compactMap { $0.objectValue.flatMap(QueuedEvent.init(json:)) }.suffix(capacity)
            if state.events.count < items.count {
                logger.warning(
                    "left out \(items.count - state.events.count) events of \(file.path) that are unreadable or over the queue's size"
                )
            }
        } catch {
            logger.warning("ignoring the event queue \(file.path): \(error); its events are lost")
        }
        return state
    }
}
