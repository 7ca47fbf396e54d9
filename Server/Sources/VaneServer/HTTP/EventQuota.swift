import NIOConcurrencyHelpers
import VaneServerCore

/// Each environment's daily quota of stored experiment events on this node (UTC days), so one
/// app, or one holder of its client key, cannot grow the database without bound.
///
/// Counted in memory: a batch reserves its new events before it is stored and gives back what
/// turned out to be duplicates, so a node never stores more than the quota in a day. Each node
/// counts on its own: N nodes behind a load balancer store up to N times the quota.
final class EventQuota: Sendable {
    /// A refusal: the quota, what is left of it today, and the seconds until the next UTC day.
    struct Refusal: Error, Sendable, Equatable {
        var quota: Int
        var remaining: Int
        var retryAfterSeconds: Int
    }

    /// Events reserved by one batch on one day.
    struct Reservation: Sendable {
        var environment: EnvironmentKey
        var day: Int64
        var count: Int
    }

    private struct Usage {
        var day: Int64
        var count: Int
    }

    /// Events per environment and UTC day; 0: no quota.
    let eventsPerDay: Int
    private let usage = NIOLockedValueBox<[EnvironmentKey: Usage]>([:])

    static let millisecondsPerDay: Int64 = 86_400_000

    init(eventsPerDay: Int) {
        self.eventsPerDay = eventsPerDay
    }

    /// Reserves `count` events of `environment`'s quota for today, or refuses all of them.
    func reserve(
        _ count: Int,
        for environment: EnvironmentKey,
        now: Int64 = Clock.nowMilliseconds()
    ) -> Result<Reservation, Refusal> {
        let day = now / Self.millisecondsPerDay
        let reservation = Reservation(environment: environment, day: day, count: count)
        guard eventsPerDay > 0, count > 0 else { return .success(reservation) }
        return usage.withLockedValue { usage in
            var today = usage[environment].flatMap { $0.day == day ? $0 : nil } ?? Usage(day: day, count: 0)
            let remaining = max(0, eventsPerDay - today.count)
            guard count <= remaining else {
                let untilTomorrow = (day + 1) * Self.millisecondsPerDay - now
                return .failure(
                    Refusal(
                        quota: eventsPerDay,
                        remaining: remaining,
                        retryAfterSeconds: max(1, Int((untilTomorrow + 999) / 1_000))
                    )
                )
            }
            today.count += count
            usage[environment] = today
            return .success(reservation)
        }
    }

    /// Gives back `count` events of a reservation that were not stored (duplicates, or a failed
    /// write). Nothing once the reservation's day is over.
    func release(_ count: Int, of reservation: Reservation) {
        guard eventsPerDay > 0, count > 0 else { return }
        usage.withLockedValue { usage in
            guard var today = usage[reservation.environment], today.day == reservation.day else { return }
            today.count = max(0, today.count - min(count, reservation.count))
            usage[reservation.environment] = today
        }
    }
}
