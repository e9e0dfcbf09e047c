import Foundation
import Observation
import Optimist

/// A habit tracker's record: one per habit and day, key "DAY/HABIT".
struct HabitLog: Codable, Sendable, Equatable {
    var habit: String
    var day: String
    var done: Bool
    var count: Int
}

/// The habit tracker's screen model, as the app had it before Optimist (a SwiftData context,
/// a reload of the day after each tap, a flag against double taps) ported onto the store:
///
/// - **Observation**: `rows` is a live query's rows; the screen redraws when they change,
///   nothing reloads.
/// - **The dedupe guard**: a tap is a mutation with a dedupe key per habit and day, so a
///   second tap while the first is still pending is refused by the store, not by a flag.
/// - **Rollback on failure**: a tap whose change the store undoes (a failed write in a
///   local-only store, or a refusal by a backend) shows why, from the mutation's last error.
@MainActor @Observable final class HabitsViewModel {
    let day: String
    /// Today's habits, as the screen lists them: kept current by the store.
    private(set) var rows: [TypedRow<HabitLog>] = []
    /// The message a banner shows after a change was undone; nil: none.
    private(set) var banner: String?

    @ObservationIgnored private let store: Store
    @ObservationIgnored private let logs: TypedCollection<HabitLog>
    @ObservationIgnored private let today: LiveResults<HabitLog>
    @ObservationIgnored private var following: Task<Void, Never>?

    init(store: Store, day: String) throws {
        self.store = store
        self.day = day
        logs = store.collection("logs", of: HabitLog.self)
        today = try logs.query().keys(prefix: "\(day)/").live()
        rows = today.rows
        let updates = today.updates()
        following = Task { [weak self] in
            for await rows in updates { self?.rows = rows }
        }
    }

    /// The tap on a habit: counted at once (the row shows it, marked pending), then saved.
    /// Returns false when a tap on the same habit is still being saved (the dedupe guard).
    @discardableResult
    func tap(_ habit: String) throws -> Bool {
        let key: Key = "\(day)/\(habit)"
        let id: MutationID
        do {
            if try logs.get(key) == nil {
                id = try logs.put(HabitLog(habit: habit, day: day, done: true, count: 1), at: key, dedupeKey: "tap \(key)")
            } else {
                id = try logs.incr(key, \.count, by: 1, dedupeKey: "tap \(key)")
            }
        } catch CollectionError.store(.duplicate) {
            return false   // the previous tap is still pending
        }
        Task { [weak self] in
            guard let self, let status = try? await self.store.settled(id), status != .committed else { return }
            self.banner = "Not saved: \((try? self.store.mutation(id))?.lastError ?? "unknown reason")"
        }
        return true
    }

    /// The count the row of `habit` shows.
    func count(_ habit: String) -> Int { rows.first { $0.value.habit == habit }?.value.count ?? 0 }

    func stop() {
        following?.cancel()
        today.close()
    }
}
