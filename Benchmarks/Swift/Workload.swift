import Optimist

/// The habit-tracker data every host uses: `n` completion logs spread over past days
/// (8 habits a day), keyed `d<day>/h<habit>` so one day's logs share a key prefix, each
/// record about 100 bytes of JSON. "Today" is the day after the last full one; it starts
/// with `todaySeed` logs, and every measured tap adds one more.
enum Workload {
    static let habitsPerDay = 8
    static let todaySeed = 3

    static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    static func day(_ d: Int) -> String { "d" + pad(d, 6) }
    static func todayIndex(n: Int) -> Int { (n - todaySeed) / habitsPerDay + 1 }

    /// Key, day and habit of existing log `i` (the last `todaySeed` fall on today).
    static func existing(_ i: Int, n: Int) -> (key: String, day: String, habit: String) {
        if i >= n - todaySeed {
            let h = "h" + pad(i - (n - todaySeed), 3)
            let d = day(todayIndex(n: n))
            return (d + "/" + h, d, h)
        }
        let d = day(i / habitsPerDay), h = "h" + pad(i % habitsPerDay, 3)
        return (d + "/" + h, d, h)
    }

    /// Which log tap `seq` adds: habit "t<seq>" today. The app knows these when the user taps,
    /// so both flows pick them before the clock starts and build their key (and the optimistic
    /// flow its record) inside the timed part.
    static func pick(_ seq: Int, n: Int) -> (day: String, habit: String) {
        (day(todayIndex(n: n)), "t" + pad(seq, 6))
    }

    static func key(day: String, habit: String) -> String { day + "/" + habit }

    static let note = "checked in from the widget, streak kept"
    static let at: Int64 = 1_763_770_000_000

    /// The record a log is stored as (about 100 bytes as JSON).
    static func record(day: String, habit: String, seq: Int) -> Record {
        ["habit": .string(habit), "day": .string(day), "done": 1, "at": .number(Double(at + Int64(seq))),
         "note": .string(note)]
    }
}
